# runtests.jl — Pkg.test for TensorComprehensions: matmul on column-major arrays, strided views in
# and out without copies, 0-d inputs, several outputs and element types, accumulation, options,
# errors and finalizers. Needs libtc: TC_LIBRARY=/path/to/libtc.so, or libtc.so.0 installed.
# tests/abi/test_julia_layout.c makes the same libtc calls with the same data from C.
using Test
using TensorComprehensions

const MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"

@testset "TensorComprehensions" begin
    @testset "matmul on column-major arrays" begin
        A = Float32[i - 2j for i in 1:3, j in 1:4]        # 3×4: TC's A(i,k) is A[i+1,k+1]
        B = Float32[(i + j) % 3 for i in 1:4, j in 1:2]   # 4×2
        prog = tc_define(MM)
        @test defs(prog) == ["mm"]
        @test infer_outputs(prog, "mm", A, B) == [(Float32, (3, 2))]
        k = compile(prog, "mm", A, B; backend="reference")
        @test k.outputs == [(Float32, (3, 2))]
        C = run(k, A, B)
        @test C isa Matrix{Float32}
        @test C == A * B
        @test k(A, B) == A * B
    end

    @testset "strided views, no copies" begin
        P = Float32[(i * 7 + j) % 9 - 4 for i in 1:6, j in 1:5]
        A = view(P, 2:2:6, 1:4)                            # 3×4, strides (2, 6), offset 1
        B = PermutedDimsArray(Float32[(i + 2j) % 5 for i in 1:2, j in 1:4], (2, 1))  # 4×2
        @test strides(A) == (2, 6) && strides(B) == (2, 1)
        prog = tc_define(MM)
        k = compile(prog, "mm", A, B)
        @test run(k, A, B) == Array(A) * Array(B)
        Cbig = fill(-1.0f0, 3, 5)
        Cv = view(Cbig, :, 2:2:4)                          # 3×2, strides (1, 6)
        @test run!(k, (Cv,), A, B) === (Cv,)
        @test Cbig[:, [2, 4]] == Array(A) * Array(B)        # written in place
        @test all(Cbig[:, [1, 3, 5]] .== -1)               # nothing else touched
    end

    @testset "0-d input, several outputs, element types" begin
        prog = tc_define("""
            def f(int32(N) A, uint8(N) B, double s) -> (gt, inc, scaled, total) {
              gt(i) = A(i) > int32(B(i))
              inc(i) = B(i) + 1
              scaled(i) = double(A(i)) * s
              total +=! A(i)
            }""")
        A = Int32[-1, 5, 300, 7]
        B = UInt8[0, 5, 255, 6]
        gt, inc, scaled, total = run(compile(prog, "f", A, B, 0.5), A, B, 0.5)
        @test gt == [false, false, true, true] && eltype(gt) == Bool
        @test inc == UInt8[1, 6, 0, 7]                     # uint8 wraps
        @test scaled == Float64.(A) .* 0.5
        @test total isa Array{Int32,0} && total[] == sum(A)
    end

    @testset "accumulation into caller arrays" begin
        prog = tc_define("def acc(float(N) A) -> (B) { B(i) += A(i) }")
        A = Float32[1, 2, 3]
        B = Float32[10, 20, 30]
        k = compile(prog, "acc", A)
        run!(k, B, A)
        run!(k, B, A)
        @test B == Float32[12, 24, 36]
    end

    @testset "errors" begin
        err = try
            tc_define("def f(float(N) A) -> (B) {\n  B(i) = A(i) +\n}"; name="f.tc")
        catch e
            e
        end
        @test err isa TCError
        @test err.status == -2 && err.name == :TC_ERROR_SYNTAX
        @test startswith(err.message, "f.tc:3:1: error: expected an expression")
        @test occursin("TC_ERROR_SYNTAX", sprint(showerror, err))

        prog = tc_define(MM)
        A, B = zeros(Float32, 2, 3), zeros(Float32, 4, 2)
        err = try compile(prog, "mm", A, B) catch e; e end
        @test err isa TCError && err.name == :TC_ERROR_SHAPE
        @test occursin("size 'K' is 3", err.message)

        B = zeros(Float32, 3, 2)
        err = try compile(prog, "mm", A, B; backend="no-such-backend") catch e; e end
        @test err isa TCError && err.name == :TC_ERROR_INVALID_ARGUMENT
        @test occursin("option 'backend' cannot be 'no-such-backend'", err.message)

        k = compile(prog, "mm", A, B)
        err = try run(k, view(zeros(Float32, 2, 3), 2:-1:1, :), B) catch e; e end
        @test err isa TCError && err.name == :TC_ERROR_SHAPE
        @test occursin("negative stride", err.message)
        @test_throws TCError run(k, zeros(Float64, 2, 3), B)       # dtype: libtc says no
        @test_throws ArgumentError run(k, zeros(ComplexF32, 2, 3), B)  # no TC type at all
        @test_throws ArgumentError tc_define("def f\0")             # NUL in a C string
    end

    @testset "finalizers and ownership" begin
        A, B = ones(Float32, 2, 3), ones(Float32, 3, 2)
        k = compile(tc_define(MM), "mm", A, B)
        GC.gc()                                            # the program is collected
        @test run(k, A, B) == fill(3.0f0, 2, 2)           # the kernel does not need it
        k = nothing
        GC.gc()
        @test TensorComprehensions.library_version() isa String
    end
end
