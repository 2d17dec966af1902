"""
    TensorComprehensions

Julia binding of libtc, the Tensor Comprehensions compiler, over `ccall`. Thin: libtc parses,
checks, infers shapes and runs; this module owns the C handles (finalizers free them), lends
Julia arrays to libtc as DLPack tensors without copying, and turns failing statuses into
`TCError`s.

Julia is column-major, and the binding passes every array with its own size and strides
(`size(A)`, `strides(A)`), so TC's `A(i,j)` is Julia's `A[i+1,j+1]`: a TC `float(M,K) A` takes a
Julia `M×K` `Matrix{Float32}`, and outputs come back as Julia arrays of the inferred size.
Any strided array works (`Array`, views such as `view(A, 1:2:5, :)`, `PermutedDimsArray`:
anything with `strides` and `pointer`), as long as its strides are non-negative (libtc's rule). Tests: `test/runtests.jl`; the C side of the
exact calls made here is tested by libtc's `tests/abi/test_julia_layout.c`.

The library is `ENV["TC_LIBRARY"]` if set, else `libtc.so.0` from the loader's search path.
Thread safety is libtc's: a Program or Kernel may be used from many threads at once.
"""
module TensorComprehensions

using Libdl

export tc_define, defs, infer_outputs, compile, run!, TCError, Program, Kernel

# ---- the library ------------------------------------------------------------------------

const SYMBOLS = (:tc_version_string, :tc_last_error_message, :tc_define, :tc_define_named,
                 :tc_program_destroy, :tc_program_num_defs, :tc_program_def_name,
                 :tc_infer_outputs, :tc_options_create, :tc_options_set, :tc_options_destroy,
                 :tc_compile, :tc_kernel_num_outputs, :tc_kernel_output_info, :tc_run,
                 :tc_kernel_destroy)
# Function pointers, resolved once at load time (so a precompiled package follows TC_LIBRARY
# at run time) and only read afterwards, which makes them safe to use from any thread.
const FPTR = Dict{Symbol,Ptr{Cvoid}}()
const LIBRARY_PATH = Ref("")

function __init__()
    handle = Libdl.dlopen(get(ENV, "TC_LIBRARY", "libtc.so.0"))  # throws the loader's message
    for s in SYMBOLS
        FPTR[s] = Libdl.dlsym(handle, s)
    end
    LIBRARY_PATH[] = Libdl.dlpath(handle)
end

"""The path of the libtc that was loaded."""
library_path() = LIBRARY_PATH[]

"""The loaded libtc's version string, e.g. "0.1.0"."""
library_version() = unsafe_string(ccall(FPTR[:tc_version_string], Cstring, ()))

# ---- errors -----------------------------------------------------------------------------

const STATUS_NAMES = Dict(-1 => :TC_ERROR_INVALID_ARGUMENT, -2 => :TC_ERROR_SYNTAX,
                          -3 => :TC_ERROR_SEMANTIC, -4 => :TC_ERROR_SHAPE,
                          -5 => :TC_ERROR_UNSUPPORTED, -6 => :TC_ERROR_COMPILE,
                          -7 => :TC_ERROR_RUNTIME, -8 => :TC_ERROR_CACHE,
                          -9 => :TC_ERROR_NO_MEMORY, -10 => :TC_ERROR_INTERNAL)

"""
    TCError(status, name, message)

A failed libtc call: `status` is the C status code, `name` its symbol (`:TC_ERROR_SHAPE`),
`message` libtc's full message (source errors: `"<name>:<line>:<col>: error: ..."`, the source
line and a caret).
"""
struct TCError <: Exception
    status::Int
    name::Symbol
    message::String
end

Base.showerror(io::IO, e::TCError) = print(io, "TCError: ", e.name, " (", e.status, "): ", e.message)

function check(status::Cint)
    status == 0 && return nothing
    # The message is per OS thread; there is no yield point between the failing ccall and
    # this one, so the task is still on the thread that failed.
    message = unsafe_string(ccall(FPTR[:tc_last_error_message], Cstring, ()))
    throw(TCError(status, get(STATUS_NAMES, Int(status), Symbol("TC_ERROR_", status)), message))
end

# ---- DLPack -----------------------------------------------------------------------------

struct DLDevice
    device_type::Int32
    device_id::Int32
end

struct DLDataType
    code::UInt8
    bits::UInt8
    lanes::UInt16
end

struct DLTensor
    data::Ptr{Cvoid}
    device::DLDevice
    ndim::Int32
    dtype::DLDataType
    shape::Ptr{Int64}
    strides::Ptr{Int64}  # in elements
    byte_offset::UInt64
end

struct TensorInfo  # tc_tensor_info
    dtype::DLDataType
    ndim::Int32
    shape::NTuple{16,Int64}
end

const kDLCPU = Int32(1)
const DTYPES = Dict{DataType,DLDataType}(
    Bool => DLDataType(6, 8, 1),
    UInt8 => DLDataType(1, 8, 1), UInt16 => DLDataType(1, 16, 1),
    UInt32 => DLDataType(1, 32, 1), UInt64 => DLDataType(1, 64, 1),
    Int8 => DLDataType(0, 8, 1), Int16 => DLDataType(0, 16, 1),
    Int32 => DLDataType(0, 32, 1), Int64 => DLDataType(0, 64, 1),
    Float16 => DLDataType(2, 16, 1), Float32 => DLDataType(2, 32, 1),
    Float64 => DLDataType(2, 64, 1))
const JULIA_TYPES = Dict(v => k for (k, v) in DTYPES)

# A tensor lent to libtc: its DLTensor and everything the DLTensor points into.
struct Lent
    array::Any
    shape::Vector{Int64}
    strides::Vector{Int64}
    tensor::DLTensor
end

function lend(a::AbstractArray{T}) where {T}
    haskey(DTYPES, T) || throw(ArgumentError("element type $T is not a TC type ($(join(keys(DTYPES), ", ")))"))
    # Strided = has strides and a pointer to its first element: Array, strided views,
    # PermutedDimsArray, ... (not all of them are `StridedArray`s).
    data, st = try
        Ptr{Cvoid}(pointer(a)), Base.strides(a)
    catch
        throw(ArgumentError("$(typeof(a)) has no strides or pointer: pass an Array, a strided view or a PermutedDimsArray"))
    end
    shape = Int64[size(a)...]
    strides = Int64[st...]  # may be negative (reversed views): libtc says no
    tensor = DLTensor(data, DLDevice(kDLCPU, 0), Int32(ndims(a)), DTYPES[T], pointer(shape),
                      pointer(strides), UInt64(0))
    return Lent(a, shape, strides, tensor)
end
lend(x::Number) = lend(fill(x))  # a scalar is a 0-d tensor (TC's `float alpha`)
lend(x) = throw(ArgumentError("expected an array of a TC element type or a number, got $(typeof(x))"))

# Calls f(tensors::Vector{DLTensor}) with every object rooted until f returns.
function with_tensors(f, objects)
    lent = Lent[lend(x) for x in objects]
    tensors = DLTensor[l.tensor for l in lent]
    return GC.@preserve lent tensors f(tensors)
end

function julia_type_and_dims(info::TensorInfo)
    T = get(JULIA_TYPES, info.dtype, nothing)
    T === nothing && throw(ArgumentError("libtc reported a dtype with no Julia type: $(info.dtype)"))
    return (T, ntuple(d -> Int(info.shape[d]), Int(info.ndim)))
end

# ---- programs ---------------------------------------------------------------------------

"""
    Program

Parsed and checked TC source (`tc_program`), freed by a finalizer.
"""
mutable struct Program
    ptr::Ptr{Cvoid}
    function Program(ptr::Ptr{Cvoid})
        p = new(ptr)
        finalizer(p) do p
            ccall(FPTR[:tc_program_destroy], Cvoid, (Ptr{Cvoid},), p.ptr)
            p.ptr = C_NULL
        end
    end
end
# Passing the object (not .ptr) to ccall roots it: no finalizer runs during the call.
Base.unsafe_convert(::Type{Ptr{Cvoid}}, p::Program) = p.ptr

"""
    tc_define(source; name=nothing) -> Program

Parses and checks TC source (`tc_define`; with `name`, `tc_define_named`: diagnostics start
with it). Throws `TCError`.
"""
function tc_define(source::AbstractString; name::Union{Nothing,AbstractString}=nothing)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    if name === nothing
        check(ccall(FPTR[:tc_define], Cint, (Ref{Ptr{Cvoid}}, Cstring), out, source))
    else
        check(ccall(FPTR[:tc_define_named], Cint, (Ref{Ptr{Cvoid}}, Cstring, Cstring), out, source, name))
    end
    return Program(out[])
end

"""
    defs(program) -> Vector{String}

The def names, in source order.
"""
function defs(p::Program)
    count = Ref{Csize_t}(0)
    check(ccall(FPTR[:tc_program_num_defs], Cint, (Ptr{Cvoid}, Ref{Csize_t}), p, count))
    return map(0:Int(count[])-1) do i
        name = Ref{Cstring}()
        check(ccall(FPTR[:tc_program_def_name], Cint, (Ptr{Cvoid}, Csize_t, Ref{Cstring}), p, i, name))
        unsafe_string(name[])
    end
end

"""
    infer_outputs(program, entry, inputs...) -> Vector{Tuple{DataType,Dims}}

Element type and size of each output of def `entry` for these inputs (`tc_infer_outputs`).
"""
function infer_outputs(p::Program, entry::AbstractString, inputs...)
    with_tensors(inputs) do tensors
        count = Ref{Csize_t}(0)  # capacity 0 and NULL: ask for the count
        check(ccall(FPTR[:tc_infer_outputs], Cint,
                    (Ptr{Cvoid}, Cstring, Ptr{DLTensor}, Csize_t, Ptr{TensorInfo}, Ref{Csize_t}),
                    p, entry, tensors, length(tensors), C_NULL, count))
        infos = Vector{TensorInfo}(undef, count[])
        check(ccall(FPTR[:tc_infer_outputs], Cint,
                    (Ptr{Cvoid}, Cstring, Ptr{DLTensor}, Csize_t, Ptr{TensorInfo}, Ref{Csize_t}),
                    p, entry, tensors, length(tensors), infos, count))
        return [julia_type_and_dims(infos[i]) for i in 1:Int(count[])]
    end
end

# ---- kernels ----------------------------------------------------------------------------

"""
    Kernel

One def compiled for one input signature (`tc_kernel`), freed by a finalizer. `outputs` holds
the element type and size of each output.
"""
mutable struct Kernel
    ptr::Ptr{Cvoid}
    entry::String
    outputs::Vector{Tuple{DataType,Tuple}}
    function Kernel(ptr::Ptr{Cvoid}, entry::String)
        k = new(ptr, entry, Tuple{DataType,Tuple}[])
        finalizer(k) do k
            ccall(FPTR[:tc_kernel_destroy], Cvoid, (Ptr{Cvoid},), k.ptr)
            k.ptr = C_NULL
        end
        count = Ref{Csize_t}(0)
        check(ccall(FPTR[:tc_kernel_num_outputs], Cint, (Ptr{Cvoid}, Ref{Csize_t}), k, count))
        for i in 0:Int(count[])-1
            info = Ref{TensorInfo}()
            check(ccall(FPTR[:tc_kernel_output_info], Cint, (Ptr{Cvoid}, Csize_t, Ref{TensorInfo}), k, i, info))
            push!(k.outputs, julia_type_and_dims(info[]))
        end
        return k
    end
end
Base.unsafe_convert(::Type{Ptr{Cvoid}}, k::Kernel) = k.ptr

option_string(v::Bool) = v ? "1" : "0"
option_string(v) = string(v)

"""
    compile(program, entry, inputs...; options...) -> Kernel

Specialises def `entry` to the inputs' element types and sizes (`tc_compile`). Keyword
arguments are libtc options (`backend="reference"`, `checked=false`, ...), checked by libtc.
"""
function compile(p::Program, entry::AbstractString, inputs...; options...)
    opts = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall(FPTR[:tc_options_create], Cint, (Ref{Ptr{Cvoid}},), opts))
    try
        for (key, value) in options
            check(ccall(FPTR[:tc_options_set], Cint, (Ptr{Cvoid}, Cstring, Cstring),
                        opts[], string(key), option_string(value)))
        end
        out = Ref{Ptr{Cvoid}}(C_NULL)
        with_tensors(inputs) do tensors
            check(ccall(FPTR[:tc_compile], Cint,
                        (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Cstring, Ptr{DLTensor}, Csize_t, Ptr{Cvoid}),
                        out, p, entry, tensors, length(tensors), opts[]))
        end
        return Kernel(out[], String(entry))
    finally
        ccall(FPTR[:tc_options_destroy], Cvoid, (Ptr{Cvoid},), opts[])  # the kernel has a copy
    end
end

"""
    run!(kernel, outputs::Tuple, inputs...) -> outputs
    run!(kernel, output::AbstractArray, inputs...) -> output

Runs the kernel into caller arrays (`tc_run`); reductions without `!` accumulate into their
contents. Outputs may be strided views.
"""
function run!(k::Kernel, outputs::Tuple, inputs...)
    with_tensors(inputs) do ins
        with_tensors(outputs) do outs
            check(ccall(FPTR[:tc_run], Cint,
                        (Ptr{Cvoid}, Ptr{DLTensor}, Csize_t, Ptr{DLTensor}, Csize_t),
                        k, ins, length(ins), outs, length(outs)))
        end
    end
    return outputs
end
run!(k::Kernel, output::AbstractArray, inputs...) = (run!(k, (output,), inputs...); output)

"""
    run(kernel, inputs...)   or   kernel(inputs...)

Runs the kernel into new zero-filled Julia arrays of the output sizes; returns the output, or
a tuple of them when the def has several.
"""
function Base.run(k::Kernel, inputs...)
    outputs = Tuple(zeros(T, dims...) for (T, dims) in k.outputs)
    run!(k, outputs, inputs...)
    return length(outputs) == 1 ? outputs[1] : outputs
end
(k::Kernel)(inputs...) = run(k, inputs...)

end # module
