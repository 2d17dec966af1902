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

Differentiation: `gradient(prog, entry)` is libtc's reverse-mode gradient of a def, a new
`Program` holding `"<entry>_grad"` (`tc_gradient`), compiled and run like any other.

The autotuner: `tune` searches a def's schedule knobs on real inputs and stores the fastest in
the compilation cache, which later `compile` calls use (`cache_hit`); `cache_export` and
`cache_import` move a cache between machines, `cache_push` and `cache_pull` between a machine
and the remote tier a cluster shares (option `cache.remote`; `cache_tier` says which tier
served a kernel; libtc's docs/guide/tuning-and-cache.md).

The library is `ENV["TC_LIBRARY"]` if set, else `libtc.so.0` from the loader's search path.
Thread safety is libtc's: a Program or Kernel may be used from many threads at once.
"""
module TensorComprehensions

using Libdl

export tc_define, defs, gradient, infer_outputs, compile, run!, TCError, Program, Kernel
export tune, TuneProgress, cache_hit, cache_tier, cache_export, cache_import, cache_push, cache_pull

# ---- the library ------------------------------------------------------------------------

const SYMBOLS = (:tc_version_string, :tc_last_error_message, :tc_define, :tc_define_named,
                 :tc_program_destroy, :tc_program_num_defs, :tc_program_def_name,
                 :tc_program_source, :tc_gradient,
                 :tc_infer_outputs, :tc_options_create, :tc_options_set, :tc_options_destroy,
                 :tc_compile, :tc_kernel_num_outputs, :tc_kernel_output_info, :tc_run,
                 :tc_kernel_destroy, :tc_tune, :tc_kernel_cache_hit, :tc_kernel_describe,
                 :tc_cache_export, :tc_cache_import, :tc_cache_push, :tc_cache_pull)
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

"""The loaded libtc's version string, e.g. "0.2.0"."""
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

# The TCError for a failing status, with this thread's last message. Call it right after the
# failing ccall: the message is per OS thread, and with no yield point in between the task is
# still on the thread that failed.
function tc_error(status::Cint)
    message = unsafe_string(ccall(FPTR[:tc_last_error_message], Cstring, ()))
    return TCError(status, get(STATUS_NAMES, Int(status), Symbol("TC_ERROR_", status)), message)
end

function check(status::Cint)
    status == 0 && return nothing
    throw(tc_error(status))
end

# An optional string argument: `nothing` is NULL, which libtc reads as its default (the only
# def, the default cache directory).
cstring_or_null(s::Nothing) = Cstring(C_NULL)
cstring_or_null(s::AbstractString) = s

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
    size::UInt32  # sizeof(TensorInfo), set before libtc fills one (tc.h's conventions)
    dtype::DLDataType
    ndim::Int32
    shape::NTuple{16,Int64}
end
# What a call that fills a tc_tensor_info takes: zero fields, the size set.
empty_tensor_info() = TensorInfo(UInt32(sizeof(TensorInfo)), DLDataType(0, 0, 0), Int32(0), ntuple(_ -> Int64(0), 16))

const kDLCPU = Int32(1)
const DTYPES = Dict{DataType,DLDataType}(
    Bool => DLDataType(6, 8, 1),
    UInt8 => DLDataType(1, 8, 1), UInt16 => DLDataType(1, 16, 1),
    UInt32 => DLDataType(1, 32, 1), UInt64 => DLDataType(1, 64, 1),
    Int8 => DLDataType(0, 8, 1), Int16 => DLDataType(0, 16, 1),
    Int32 => DLDataType(0, 32, 1), Int64 => DLDataType(0, 64, 1),
    Float16 => DLDataType(2, 16, 1), Float32 => DLDataType(2, 32, 1),
    Float64 => DLDataType(2, 64, 1))
# bfloat16: Core.BFloat16 (Julia >= 1.11) where there is one.
isdefined(Core, :BFloat16) && (DTYPES[Core.BFloat16] = DLDataType(4, 16, 1))
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
    TensorComprehensions.source(program) -> String

The program's TC source (`tc_program_source`): the text given to `tc_define`, or the generated
source of a program libtc made, such as a `gradient`. Not exported (a common name).
"""
function source(p::Program)
    text = Ref{Cstring}()
    check(ccall(FPTR[:tc_program_source], Cint, (Ptr{Cvoid}, Ref{Cstring}), p, text))
    return GC.@preserve p unsafe_string(text[])  # the text is owned by the program
end

"""
    gradient(program, entry=nothing) -> Program

Reverse-mode differentiation of def `entry` (`nothing`: the only def) by libtc
(`tc_gradient`): a new program holding one def, `"<entry>_grad"`. Its inputs are `entry`'s
inputs followed by `"d_<output>"` for each floating-point output (that output's element type
and size); its outputs are `"d_<input>"` for each floating-point input, in input order. Integer
inputs and outputs carry no gradient. For `mm` (`C = A * B`), `mm_grad(A, B, d_C)` gives
`(d_C * B', A' * d_C)`. Throws `TCError` (`:TC_ERROR_UNSUPPORTED`, naming the statement and the
reason) where libtc cannot express a gradient (a `*=` reduction, no floating-point input or
output, ...). `TensorComprehensions.source(g)` is the generated TC.
"""
function gradient(p::Program, entry::Union{Nothing,AbstractString}=nothing)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall(FPTR[:tc_gradient], Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Cstring),
                out, p, cstring_or_null(entry)))
    return Program(out[])
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
        infos = fill(empty_tensor_info(), Int(count[]))
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
            info = Ref(empty_tensor_info())
            check(ccall(FPTR[:tc_kernel_output_info], Cint, (Ptr{Cvoid}, Csize_t, Ref{TensorInfo}), k, i, info))
            push!(k.outputs, julia_type_and_dims(info[]))
        end
        return k
    end
end
Base.unsafe_convert(::Type{Ptr{Cvoid}}, k::Kernel) = k.ptr

option_string(v::Bool) = v ? "1" : "0"
option_string(v) = string(v)

# Calls f(options::Ptr{Cvoid}) with a new tc_options holding `options` (key => value pairs, set
# in order and checked by libtc) and destroys it afterwards (a kernel keeps its own copy).
function with_options(f, options)
    opts = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall(FPTR[:tc_options_create], Cint, (Ref{Ptr{Cvoid}},), opts))
    try
        for (key, value) in options
            check(ccall(FPTR[:tc_options_set], Cint, (Ptr{Cvoid}, Cstring, Cstring),
                        opts[], string(key), option_string(value)))
        end
        return f(opts[])
    finally
        ccall(FPTR[:tc_options_destroy], Cvoid, (Ptr{Cvoid},), opts[])
    end
end

"""
    compile(program, entry, inputs...; options...) -> Kernel

Specialises def `entry` to the inputs' element types and sizes (`tc_compile`). Keyword
arguments are libtc options (`backend="reference"`, `checked=false`, `cache=dir`, ...), checked
by libtc. Unless `cache="off"` or a knob is set explicitly, the compilation cache is consulted
for tuned knob values (see `tune`, `cache_hit`).
"""
function compile(p::Program, entry::AbstractString, inputs...; options...)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    with_options(options) do opts
        with_tensors(inputs) do tensors
            check(ccall(FPTR[:tc_compile], Cint,
                        (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Cstring, Ptr{DLTensor}, Csize_t, Ptr{Cvoid}),
                        out, p, entry, tensors, length(tensors), opts))
        end
    end
    return Kernel(out[], String(entry))
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

"""
    cache_hit(kernel) -> Bool

Whether the kernel's knob values came from the compilation cache (`tc_kernel_cache_hit`);
`TensorComprehensions.describe(kernel)` says from where, or why the cache was not used.
"""
function cache_hit(k::Kernel)
    hit = Ref{Cint}(0)
    check(ccall(FPTR[:tc_kernel_cache_hit], Cint, (Ptr{Cvoid}, Ref{Cint}), k, hit))
    return hit[] != 0
end

"""
    TensorComprehensions.describe(kernel) -> String

libtc's description of a compiled kernel (`tc_kernel_describe`): every option with its value,
where its knob values came from (a cache hit with its directory, a miss, a tuning run, or why
the cache was not used), the backend and the schedule chosen. Not exported (a common name).
"""
function describe(k::Kernel)
    text = Ref{Cstring}()
    check(ccall(FPTR[:tc_kernel_describe], Cint, (Ptr{Cvoid}, Ref{Cstring}), k, text))
    return GC.@preserve k unsafe_string(text[])  # the text is owned by the kernel
end

# ---- the autotuner and the cache --------------------------------------------------------

"""
    TuneProgress

Where a `tune` search stands (`tc_tune_progress`), given to its progress function after every
measured candidate: `generation` (from 1) of `generations` planned, `candidates_done` (the
starting point is the first) of `candidates_planned`, `best_ms` and `default_ms` (median
milliseconds of the best so far and of the starting point), `elapsed_s` and `budget_s`.
"""
struct TuneProgress
    size::UInt32
    generation::Int32
    generations::Int32
    candidates_done::Int64
    candidates_planned::Int64
    best_ms::Float64
    default_ms::Float64
    elapsed_s::Float64
    budget_s::Float64
end
# libtc hands the callback a pointer to a C tc_tune_progress, read here with unsafe_load, so
# this struct must have its C layout. tests/abi/test_julia_layout.c reads these two constants
# from this file and checks them against offsetof/sizeof in C; the check below ties them to
# how Julia lays the struct out (when the module is loaded or precompiled).
const TUNE_PROGRESS_SIZE = 64
const TUNE_PROGRESS_OFFSETS = (0, 4, 8, 16, 24, 32, 40, 48, 56)
if sizeof(TuneProgress) != TUNE_PROGRESS_SIZE ||
   Tuple(Int(fieldoffset(TuneProgress, i)) for i in 1:fieldcount(TuneProgress)) != TUNE_PROGRESS_OFFSETS
    error("TuneProgress does not have the layout of tc_tune_progress")
end

format_ms(t::Real) = isfinite(t) && t > 0 ? string(round(t; sigdigits=3), " ms") : "-"

# One progress line: "tune mm: generation 1/2, candidates 3/8, best 0.12 ms (4.1x), ...".
function progress_text(entry::AbstractString, p::TuneProgress)
    speedup = ""
    if isfinite(p.best_ms) && isfinite(p.default_ms) && p.best_ms > 0 && p.default_ms > 0
        speedup = string(" (", round(p.default_ms / p.best_ms; digits=2), "x)")
    end
    budget = isfinite(p.budget_s) ? string(round(Int, p.budget_s)) : "-"
    return string("tune ", entry, ": generation ", p.generation, "/", p.generations,
                  ", candidates ", p.candidates_done, "/", p.candidates_planned,
                  ", best ", format_ms(p.best_ms), speedup, ", default ", format_ms(p.default_ms),
                  ", ", round(p.elapsed_s; digits=1), "/", budget, " s")
end

# tune(progress=true): the search's progress on a stream (stderr). On a terminal one line
# rewritten with "\r" after every candidate; otherwise one line per generation (the last state
# of each) and the final state, so logs get a few lines, not one per candidate.
mutable struct ProgressLine
    entry::String
    io::IO
    tty::Bool
    last::Union{Nothing,TuneProgress}
    printed::Union{Nothing,TuneProgress}
    width::Int
end
ProgressLine(entry::AbstractString, io::IO) =
    ProgressLine(String(entry), io, io isa Base.TTY, nothing, nothing, 0)

function write_quietly(io::IO, text::AbstractString)
    try
        print(io, text)
        flush(io)
    catch e
        e isa InterruptException && rethrow()
        # a closed or broken stderr must not stop the search
    end
    return nothing
end

function update!(line::ProgressLine, p::TuneProgress)
    if line.tty
        text = progress_text(line.entry, p)
        write_quietly(line.io, string("\r", text, " "^max(0, line.width - length(text))))
        line.width = length(text)
    elseif line.last !== nothing && p.generation != line.last.generation
        write_quietly(line.io, string(progress_text(line.entry, line.last), "\n"))
        line.printed = line.last
    end
    line.last = p
    return false  # never stops the search
end

function finish!(line::ProgressLine)
    if line.tty
        line.width > 0 && write_quietly(line.io, "\n")
    elseif line.last !== nothing && line.last !== line.printed
        write_quietly(line.io, string(progress_text(line.entry, line.last), "\n"))
    end
    return nothing
end

# What tc_tune's `user` pointer points at during one `tune` call: the progress function and,
# once it has thrown, what it threw.
mutable struct TuneState
    report::Any
    error::Any
end

# The tc_tune_callback. It runs inside tc_tune, and an exception must not unwind through
# libtc's C++ frames, so one stops the search (non-zero) and `tune` throws it again after
# tc_tune has returned.
function tune_callback(progress::Ptr{TuneProgress}, user::Ptr{Cvoid})::Cint
    state = unsafe_pointer_to_objref(user)::TuneState
    state.error === nothing || return Cint(1)
    try
        return state.report(unsafe_load(progress)) === true ? Cint(1) : Cint(0)
    catch e
        state.error = e
        return Cint(1)
    end
end

"""
    tune(program, entry, inputs...; budget=60, progress=true, options...) -> Kernel

Searches the backend's knobs for the fastest kernel of def `entry` on these inputs
(`tc_tune`), stores the best in the compilation cache and returns it compiled; a later
`compile` with the same def, sizes and cache (and no knobs set) uses it (`cache_hit`).

The inputs' data is used (only read) to measure and check candidates: one whose outputs differ
from the starting point's is discarded. Keyword arguments are libtc options as for `compile`:
the knobs they set are the starting point (the "default"); `cache="auto"|"off"|dir` names the
cache (a directory must be this user's and not writable by group or others; created 0700 if
missing); `tune.strategy`, `tune.population`, `tune.generations`, `tune.patience`, `tune.threads` shape the
search (keys with a dot go as pairs: `tune(p, "mm", A, B; Symbol("tune.population") => 8)`).
`budget`: seconds for the search (option `tune.budget`, 0 to 86400 with up to 3 decimals); the
starting point is measured and stored first, whatever the budget (0: that alone), and the best
so far is kept when it runs out.

`progress`: `true` prints the progress on stderr (a line rewritten in place on a terminal,
else a line per generation); `false` prints nothing; a function is called with a
`TuneProgress` after every measured candidate and stops the search (keeping the best so far)
by returning `true` (anything else continues). An exception it throws stops the search and is
thrown again here once tc_tune has returned. The function runs inside tc_tune: keep it short.

Candidates are timed one at a time: keep the machine otherwise idle. Throws `TCError`
(`:TC_ERROR_CACHE` before any tuning when the cache cannot be written).
"""
function tune(p::Program, entry::AbstractString, inputs...;
              budget::Union{Nothing,Real}=60, progress=true, options...)
    haskey(options, Symbol("tune.budget")) &&
        throw(ArgumentError("tune: give the budget as budget=, not as tune.budget"))
    settings = Pair{Symbol,Any}[key => value for (key, value) in options]
    if budget !== nothing
        push!(settings, Symbol("tune.budget") => (isinteger(budget) ? Int(budget) : budget))
    end
    reporter = progress === true ? ProgressLine(entry, stderr) : nothing
    report = if reporter !== nothing
        q -> update!(reporter, q)
    elseif progress === false || progress === nothing
        nothing
    elseif progress isa Base.Callable
        progress
    else
        throw(ArgumentError("tune: progress must be true, false or a function, not $(typeof(progress))"))
    end
    state = TuneState(report, nothing)
    callback = report === nothing ? C_NULL :
               @cfunction(tune_callback, Cint, (Ptr{TuneProgress}, Ptr{Cvoid}))
    out = Ref{Ptr{Cvoid}}(C_NULL)
    failure = try
        with_options(settings) do opts
            with_tensors(inputs) do tensors
                GC.@preserve state begin
                    status = ccall(FPTR[:tc_tune], Cint,
                                   (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Cstring, Ptr{DLTensor}, Csize_t,
                                    Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
                                   out, p, entry, tensors, length(tensors), opts, callback,
                                   pointer_from_objref(state))
                    # The message now: it is per thread, and printing below may yield.
                    status == 0 ? nothing : tc_error(status)
                end
            end
        end
    finally
        reporter === nothing || finish!(reporter)
    end
    if state.error !== nothing
        out[] == C_NULL || ccall(FPTR[:tc_kernel_destroy], Cvoid, (Ptr{Cvoid},), out[])
        throw(state.error)
    end
    failure === nothing || throw(failure)
    return Kernel(out[], String(entry))
end

"""
    cache_export(file; cache_dir=nothing)

Writes every record of a compilation cache into one portable file, whole or not at all
(`tc_cache_export`). `cache_dir=nothing` is the default directory of option `cache="auto"`
(`TC_CACHE_DIR`, else `XDG_CACHE_HOME/libtc`, else `~/.cache/libtc`). Throws `TCError`
(`:TC_ERROR_CACHE`) naming the path and the problem.
"""
function cache_export(file::AbstractString; cache_dir::Union{Nothing,AbstractString}=nothing)
    check(ccall(FPTR[:tc_cache_export], Cint, (Cstring, Cstring), cstring_or_null(cache_dir), file))
    return nothing
end

"""
    cache_import(file; cache_dir=nothing)

Merges a file written by `cache_export` into a compilation cache (`tc_cache_import`;
`cache_dir=nothing`: the default directory; created 0700 if missing), keeping the faster entry
per key. Records tuned for another target are kept but not used here. Throws `TCError`
(`:TC_ERROR_CACHE`) for a file that is not such an export, naming the path and the problem.
"""
function cache_import(file::AbstractString; cache_dir::Union{Nothing,AbstractString}=nothing)
    check(ccall(FPTR[:tc_cache_import], Cint, (Cstring, Cstring), cstring_or_null(cache_dir), file))
    return nothing
end

"""
    cache_tier(kernel) -> Union{Symbol,Nothing}

Which tier of the compilation cache served the kernel's knob values (`tc_kernel_cache_hit`):
`:local`, `:remote` (option `cache.remote`; the record is now in the local cache too), or
`nothing` when they did not come from the cache.
"""
function cache_tier(k::Kernel)
    hit = Ref{Cint}(0)
    check(ccall(FPTR[:tc_kernel_cache_hit], Cint, (Ptr{Cvoid}, Ref{Cint}), k, hit))
    return hit[] == 0 ? nothing : hit[] == 1 ? :local : :remote
end

"""
    cache_push(remote, remote_key; cache_dir=nothing, options...) -> Int

Copies every record and tuning history entry of a local compilation cache (`cache_dir=nothing`:
the default directory) to the remote tier at `remote` (`"redis://HOST:PORT[/DB]"` or
`"unix:///PATH"`), signing each with the secret in the file `remote_key` (`tc_cache_push`); the
remote keeps the faster record per key. Returns the number of records it stored. Further
keyword arguments are options (`Symbol("cache.remote_timeout") => 1000`). Throws `TCError`
(`:TC_ERROR_CACHE`) naming the server, the key file or the cache.
"""
cache_push(remote::AbstractString, remote_key::AbstractString; cache_dir::Union{Nothing,AbstractString}=nothing,
           options...) = remote_transfer(:tc_cache_push, remote, remote_key, cache_dir, options)

"""
    cache_pull(remote, remote_key; cache_dir=nothing, options...) -> Int

The other way (`tc_cache_pull`): the remote tier's records whose signature verifies, and their
history, into a local cache (created 0700 if missing), keeping the faster per key. Returns the
number of records stored locally.
"""
cache_pull(remote::AbstractString, remote_key::AbstractString; cache_dir::Union{Nothing,AbstractString}=nothing,
           options...) = remote_transfer(:tc_cache_pull, remote, remote_key, cache_dir, options)

# tc_cache_push or tc_cache_pull with options naming the remote tier, then the caller's.
function remote_transfer(symbol, remote, remote_key, cache_dir, options)
    stored = Ref{Csize_t}(0)
    named = (Symbol("cache.remote") => remote, Symbol("cache.remote_key") => remote_key, options...)
    with_options(named) do opts
        check(ccall(FPTR[symbol], Cint, (Cstring, Ptr{Cvoid}, Ref{Csize_t}), cstring_or_null(cache_dir), opts,
                    stored))
    end
    return Int(stored[])
end

end # module
