# mm.jl — matrix multiply with a Tensor Comprehension from Julia, on column-major arrays and a
# strided view, without copies. Julia is not installable on libtc's CI machines, so this is not
# run by the test suite (tests/abi/test_julia_layout.c checks the same calls from C).
#
#   TC_LIBRARY=/path/to/libtc.so julia --project=bindings/julia/TensorComprehensions examples/julia/mm.jl
using TensorComprehensions

prog = tc_define("""
    def mm(float(M,K) A, float(K,N) B) -> (C) {
      C(i,j) +=! A(i,k) * B(k,j)
    }""", name="mm.tc")

A = rand(Float32, 64, 32)      # TC's A(i,k) is A[i+1,k+1]: sizes match Julia's
B = rand(Float32, 32, 48)
k = compile(prog, "mm", A, B; backend="reference")
C = k(A, B)                    # a new 64×48 Matrix{Float32}
@assert C ≈ A * B

Ct = zeros(Float32, 48, 64)
run!(k, PermutedDimsArray(Ct, (2, 1)), A, B)   # write the transpose in place
@assert Ct ≈ transpose(A * B)

try
    compile(prog, "mm", A, A)
catch e
    e isa TCError || rethrow()
    println("as expected: ", sprint(showerror, e))
end
println("julia example: ok")
