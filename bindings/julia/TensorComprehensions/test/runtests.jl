# runtests.jl — Pkg.test for TensorComprehensions: matmul on column-major arrays, strided views in
# and out without copies, 0-d inputs, several outputs and element types, accumulation, options,
# errors, the gradient of mm, and finalizers; the autotuner (tune, cache_hit, cache_export,
# cache_import) against private cache directories; the remote tier (cache_push, cache_pull,
# cache_tier) against a redis-server started on a free loopback port. Needs libtc: TC_LIBRARY=/path/to/libtc.so,
# or libtc.so.0 installed.
# tests/abi/test_julia_layout.c makes the same libtc calls with the same data from C.
using Sockets
using Test
using TensorComprehensions

const MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"

# A deliberately bad starting point for the tuner (scalar code, 1×1 tiles, one thread), so the
# search has something to beat (only a candidate that beats the start is stored), and a short
# search: two generations of four candidates. Keys with a dot go as pairs.
const BAD_START = (Symbol("cpu.vectorize") => 1, Symbol("cpu.tile") => "1x1",
                   Symbol("cpu.unroll") => 1, :threads => 1,
                   Symbol("tune.population") => 4, Symbol("tune.generations") => 2)
# The same, searching one generation of two.
const SHORT = merge(Dict{Symbol,Any}(BAD_START),
                    Dict{Symbol,Any}(Symbol("tune.population") => 2, Symbol("tune.generations") => 1))

# 48×32 and 32×40 of small integers: products and sums are exact in any order, so every
# schedule the tuner tries gives the same bits and results compare with ==.
tune_inputs() = (Float32[(3i + 7j) % 9 - 4 for i in 1:48, j in 1:32],
                 Float32[(5i + 2j) % 7 - 3 for i in 1:32, j in 1:40])

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

    @testset "gradient of mm" begin
        prog = tc_define(MM)
        g = gradient(prog)                                  # the only def
        @test g isa Program
        @test defs(g) == ["mm_grad"]
        @test occursin("def mm_grad", TensorComprehensions.source(g))
        @test TensorComprehensions.source(prog) == MM       # the original is untouched
        @test defs(gradient(prog, "mm")) == ["mm_grad"]
        A = Float32[i - 2j for i in 1:3, j in 1:4]          # small integers: exact products
        B = Float32[(i + j) % 3 for i in 1:4, j in 1:2]
        dC = Float32[(2i + j) % 5 - 2 for i in 1:3, j in 1:2]
        @test infer_outputs(g, "mm_grad", A, B, dC) == [(Float32, (3, 4)), (Float32, (4, 2))]
        prog = nothing
        GC.gc()                                             # the gradient does not need it
        dA, dB = run(compile(g, "mm_grad", A, B, dC; backend="reference"), A, B, dC)
        @test dA == dC * B'
        @test dB == A' * dC

        err = try gradient(tc_define("def twice(int32(N) X) -> (Y) { Y(i) = X(i) * 2 }")) catch e; e end
        @test err isa TCError && err.name == :TC_ERROR_UNSUPPORTED
        err = try gradient(tc_define(MM), "nope") catch e; e end
        @test err isa TCError && err.name == :TC_ERROR_INVALID_ARGUMENT
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

    @testset "TuneProgress has tc_tune_progress's layout" begin
        @test sizeof(TuneProgress) == TensorComprehensions.TUNE_PROGRESS_SIZE == 56
        offsets = Tuple(Int(fieldoffset(TuneProgress, i)) for i in 1:fieldcount(TuneProgress))
        @test offsets == TensorComprehensions.TUNE_PROGRESS_OFFSETS == (0, 4, 8, 16, 24, 32, 40, 48)
        @test isbitstype(TuneProgress)
    end

    @testset "tune, then compile hits the cache" begin
        A, B = tune_inputs()
        want = A * B
        prog = tc_define(MM)
        mktempdir() do dir                                   # mode 0700, removed afterwards
            cache = joinpath(dir, "cache")                   # created 0700 by libtc
            calls = TuneProgress[]
            k = tune(prog, "mm", A, B; budget=30, progress=p -> (push!(calls, p); false),
                     cache=cache, BAD_START...)
            @test k isa Kernel
            @test run(k, A, B) == want
            @test occursin("tuned now:", TensorComprehensions.describe(k))
            @test !isempty(calls)
            @test all(p -> p.generations == 2 && 1 <= p.generation <= p.generations, calls)
            # One call per candidate; once more at the end, the count unchanged, where the final
            # comparison gives the result back to the start (its best then the default's).
            again = length(calls) > 1 && calls[end].candidates_done == calls[end-1].candidates_done
            search = again ? calls[1:end-1] : calls
            @test [p.candidates_done for p in search] == 1:length(search)
            @test !again || calls[end].best_ms == calls[end].default_ms
            @test all(p -> p.candidates_done <= p.candidates_planned, calls)
            @test all(p -> 0 < p.best_ms <= p.default_ms < Inf, calls)
            @test all(p -> p.budget_s == 30 && p.elapsed_s >= 0, calls)
            @test issorted([p.best_ms for p in search]; rev=true)  # the best so far only improves

            plain = compile(prog, "mm", A, B; cache="off")
            @test !cache_hit(plain)
            @test run(plain, A, B) == want
            later = compile(prog, "mm", A, B; cache=cache)      # no knobs set: the cache decides
            @test cache_hit(later)
            @test occursin("cache: hit", TensorComprehensions.describe(later))
            @test run(later, A, B) == want
        end
    end

    @testset "tune: stopping, exceptions, no progress, bad arguments" begin
        A, B = tune_inputs()
        prog = tc_define(MM)
        mktempdir() do dir
            n = Ref(0)
            k = tune(prog, "mm", A, B; budget=30, progress=p -> (n[] += 1; true), cache=dir,
                     BAD_START...)
            @test n[] == 1                                   # true stops after the first call
            @test run(k, A, B) == A * B                      # the starting point comes back
            @test cache_hit(compile(prog, "mm", A, B; cache=dir))  # the start, measured and stored first
        end

        n = Ref(0)
        err = try
            tune(prog, "mm", A, B; progress=p -> (n[] += 1; error("stop here")), cache="off",
                 BAD_START...)
        catch e
            e
        end
        @test err isa ErrorException && err.msg == "stop here"  # thrown again by tune
        @test n[] == 1

        n[] = 0
        tune(prog, "mm", A, B; progress=p -> (n[] += 1; nothing), cache="off", BAD_START...)
        @test n[] >= 2                                       # nothing (not true) continues
        k = tune(prog, "mm", A, B; progress=false, cache="off", SHORT...)
        @test run(k, A, B) == A * B
        @test !cache_hit(k)

        @test_throws ArgumentError tune(prog, "mm", A, B; progress="yes", cache="off")
        @test_throws ArgumentError tune(prog, "mm", A, B; Symbol("tune.budget") => 5)
        err = try tune(prog, "mm", A, B; progress=false, Symbol("tune.population") => 0) catch e; e end
        @test err isa TCError && err.name == :TC_ERROR_INVALID_ARGUMENT
        err = try tune(prog, "nope", A, B; progress=false, cache="off") catch e; e end
        @test err isa TCError && err.name == :TC_ERROR_INVALID_ARGUMENT
    end

    @testset "the progress line" begin
        io = IOBuffer()                                     # not a terminal: a line per generation
        line = TensorComprehensions.ProgressLine("mm", io)
        for (gen, done) in ((1, 1), (1, 2), (2, 3), (2, 4))
            TensorComprehensions.update!(line, TuneProgress(UInt32(64), gen, 2, done, 4, 0.5, 1.0, 0.1 * done, 30.0))
        end
        TensorComprehensions.finish!(line)
        text = String(take!(io))
        lines = split(text, "\n"; keepempty=false)
        @test length(lines) == 2
        @test occursin("generation 1/2", lines[1]) && occursin("candidates 2/4", lines[1])
        @test occursin("candidates 4/4", lines[2]) && occursin("(2.0x)", lines[2])
        @test !occursin("\r", text)
    end

    @testset "cache_push, cache_pull and cache_tier with a redis-server" begin
        A, B = tune_inputs()
        prog = tc_define(MM)
        mktempdir() do dir
            port, probe = listenany(ip"127.0.0.1", 20000)
            close(probe)
            server = run(pipeline(`redis-server --port $port --bind 127.0.0.1 --dir $dir --save "" --appendonly no`;
                                  stdout=devnull); wait=false)
            try
                for _ in 1:200
                    try
                        close(connect(ip"127.0.0.1", port))
                        break
                    catch
                        sleep(0.025)
                    end
                end
                url, key = "redis://127.0.0.1:$port", joinpath(dir, "key")
                write(key, "a secret of at least sixteen bytes\n")
                chmod(key, 0o600)
                remote = (Symbol("cache.remote") => url, Symbol("cache.remote_key") => key,
                          Symbol("cache.remote_timeout") => 5000)  # a loaded machine's stall is not a miss
                tuned, other, pulled = joinpath(dir, "tuned"), joinpath(dir, "other"), joinpath(dir, "pulled")
                tune(prog, "mm", A, B; budget=30, progress=false, cache=tuned, BAD_START...)
                @test cache_push(url, key; cache_dir=tuned) == 2  # the kernel and the shared code
                k = compile(prog, "mm", A, B; cache=other, remote...)
                @test cache_tier(k) == :remote
                @test cache_hit(k)
                @test run(k, A, B) == A * B
                @test cache_tier(compile(prog, "mm", A, B; cache=other)) == :local
                @test cache_tier(compile(prog, "mm", A, B; cache="off")) === nothing
                @test cache_pull(url, key; cache_dir=pulled) == 2
                @test cache_tier(compile(prog, "mm", A, B; cache=pulled)) == :local
                chmod(key, 0o644)
                err = try cache_pull(url, key; cache_dir=pulled) catch e; e end
                @test err isa TCError && err.name == :TC_ERROR_CACHE
                @test occursin("can be read or written by group or others", err.message)
            finally
                kill(server)
                wait(server)
            end
        end
    end

    @testset "cache_export, then cache_import into an empty cache" begin
        A, B = tune_inputs()
        prog = tc_define(MM)
        mktempdir() do dir
            tuned, other = joinpath(dir, "tuned"), joinpath(dir, "other")
            tune(prog, "mm", A, B; budget=30, progress=false, cache=tuned, BAD_START...)
            @test cache_hit(compile(prog, "mm", A, B; cache=tuned))
            @test !cache_hit(compile(prog, "mm", A, B; cache=other))
            file = joinpath(dir, "tuned.tccache")
            @test cache_export(file; cache_dir=tuned) === nothing
            @test isfile(file)
            cache_import(file; cache_dir=other)
            k = compile(prog, "mm", A, B; cache=other)
            @test cache_hit(k)
            @test run(k, A, B) == A * B

            junk = joinpath(dir, "junk.tccache")
            write(junk, repeat("this is not a libtc cache export\n", 10))
            err = try cache_import(junk; cache_dir=other) catch e; e end
            @test err isa TCError && err.name == :TC_ERROR_CACHE
            @test occursin("junk.tccache", err.message)
            @test_throws ArgumentError cache_export("a\0b"; cache_dir=other)  # NUL in a C string
        end
    end

    @testset "an unsafe cache directory is the cache error" begin
        A, B = tune_inputs()
        prog = tc_define(MM)
        mktempdir() do dir
            chmod(dir, 0o770)                               # group-writable: libtc refuses it
            n = Ref(0)
            err = try
                tune(prog, "mm", A, B; progress=p -> (n[] += 1; false), cache=dir, BAD_START...)
            catch e
                e
            end
            @test err isa TCError && err.name == :TC_ERROR_CACHE
            @test occursin("writable by group or others", err.message)
            @test n[] == 0                                   # checked before any tuning
            @test !cache_hit(compile(prog, "mm", A, B; cache=dir))  # compile only ignores it
        end
    end
end
