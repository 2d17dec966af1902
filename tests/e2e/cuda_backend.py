"""cuda_backend.py - what backend=cuda does outside the corpus, on a machine with or without
CUDA (each check in a child process: NVRTC and the driver are found once per process, so the
checks that hide them need their own):

  no_cuda            NVRTC and the driver hidden (TC_NVRTC, TC_CUDA_DRIVER name nothing):
                     backend=cuda is TC_ERROR_UNSUPPORTED naming what was not found, with
                     cuda.arch=auto (the driver) and with cuda.arch=sm_90 (NVRTC); the emulation
                     and the cpu backend still compile and run
  explicit_arch      cuda.arch=sm_80 and sm_90 compile with no GPU (skipped without NVRTC):
                     the kernel's code is the CUDA C (an 8x8 register tile), describe names the
                     cubin and gives ptxas's registers, spills, shared memory and the
                     occupancy; host tensors
                     given to that kernel are TC_ERROR_SHAPE naming the tensor
  kernel_code        tc_kernel_code of an emulated kernel: the CUDA C text with one
                     __global__ function per launch; describe lists the launches
  bad_options        cuda.block over 1024 threads, cuda.tile and cuda.arch malformed:
                     TC_ERROR_INVALID_ARGUMENT naming the option
  strided_tensors    an emulated kernel on transposed (strided) inputs and output
  registers          cuda.private=1 keeps matmul's accumulator in a register (the text says
                     so), cuda.private=0 does not; both compute A @ B
  register_tiles     cuda.regtile: auto gives matmul 8x8 values a thread (64 registers, a block
                     of 8x8), 4x4, 2x8 and 1 (one accumulator, the 32x8 block) at odd sizes and
                     blocks, each right; at full tiles the registers live across the loop over
                     k tiles; B's tiles copied with 128-bit loads, and element by element when B is
                     not 16-byte aligned (the same bits); each thread's runs of 4 adjacent columns
                     (blocks of 8x8, 3x5 and 2x2) and C's registers loaded and stored as float4,
                     element by element where C is not 16-byte aligned or a row's run is not (rows
                     of 130); indices in 32 bits (int); cuda.fma=1 fuses the updates (fmaf),
                     cuda.fma=0 gives the reference backend's bits
  shared_memory      cuda.shared=1: matmul's A and B tiles are copied to shared memory between
                     __syncthreads (two __shared__ arrays) and computed right at odd sizes,
                     grids and blocks; an elementwise def (no element read twice) and a gather
                     (its index unproven) promote nothing; cuda.shared=0 has no __shared__
  unroll             cuda.unroll=4 with 4-wide k tiles: no loop over the k points is left (isl
                     unrolled it), the accumulator stays in a register over the unrolled run,
                     and the result is right; cuda.unroll=2 leaves the loop
  lane_reductions    cuda.reduction=tree and atomic: matmul's k loop split across the threads
                     along x and combined by shuffles (tc_group_sync, tc_shfl_down, then the
                     warps' totals through shared memory) or atomics (tc_atomic_update), right
                     at odd sizes, with one warp along x (32x8) and with several (64x4: four
                     groups of two warps, each with its own barrier; 256; 96x2); a 1000-long
                     int32 row sum exact, a max with a NaN, an int8 product, a float16 min and a bfloat16 max
                     right; cuda.block's x not a multiple of 32, or x over 32 with y times z
                     over 15, is TC_ERROR_INVALID_ARGUMENT naming both options
  contraction_route  cuda.contract: every ROUTE_CASES def (index orders, batches, convolutions,
                     epilogues, float64, empty) at every tile, pipeline depth and split right;
                     cuda.fma=0's bits; float16 and bfloat16 on tensor cores within half an ulp;
                     float32 as TF32 (cuda.tf32=1): the exact sum of the TF32-rounded values, every
                     case within TF32's error, not at cuda.fma=0, SIMT tiles refused
  row_route          cuda.rowwise: softmax and layernorm at odd sizes take the row route (one
                     launch, a row per group of threads, tc_group_sync between statements) at
                     auto and at blocks 32x4, 64x2, 96 with 5 blocks, each right; rows of two
                     indices, an int32 row sum exact, float16, a where clause's part of a row, a
                     second `+=` into a reduced row, a gather (checked: a bad index is
                     TC_ERROR_RUNTIME naming the read); auto leaves rows under 32 values, a
                     matrix product, float sums at cuda.fma=0 and a cuda.block the route cannot
                     run to isl, cuda.rowwise=1 takes the first two and makes the last an error
                     naming both options; softmax's profile at 128x1000: sectors_per_request at
                     most 5 and work_balance at most 1.5
  small_grids        a launch of fewer blocks than the GPU's SMs by default tiles gets its y tile
                     cut to the block's threads: 1LUT at the benchmark's sizes 2x16 blocks (2x4
                     before), right at odd sizes; a cuda.tile it was given, a grid already
                     large enough and register tiles keep theirs
  blas_route         cuda.blas=1 on a matrix product: emulated, the generated kernel (right) and
                     why; compiled for sm_90, the cuBLAS call described (where the toolkit's cuBLAS
                     loads) and the generated kernel still made; fcrelu through cuBLASLt (bias
                     and ReLU); not taken at cuda.fma=0 or with another epilogue, saying why
  blas_route_missing $TC_CUBLAS naming no library: the description names it, the generated
                     kernel stands
  no_host_compiler   the emulation with $CXX naming no compiler: TC_ERROR_COMPILE with the
                     command, and nothing left in $TMPDIR

    TC_LIBRARY=build/src/libtc.so /usr/bin/python3 tests/e2e/cuda_backend.py [NAME...]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tclib  # noqa: E402

MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"
EMULATE = {"backend": "cuda", "cuda.emulate": "1"}
F64 = np.float64
# isl's schedule for a def a route would take (the checks of its mapping knobs)
EMULATE_ISL = dict(EMULATE, **{"cuda.contract": "0", "cuda.rowwise": "0"})


class Skip(Exception):
    pass


def expect_error(f, status, *fragments):
    try:
        f()
    except tclib.TCError as e:
        assert e.status == status, "expected %s, got %s: %s" % (
            tclib.STATUS_NAME[status], tclib.STATUS_NAME.get(e.status), e.message)
        for frag in fragments:
            assert frag in e.message, "%r not in %r" % (frag, e.message)
        return e.message
    raise AssertionError("expected %s, got success" % tclib.STATUS_NAME[status])


def mm_inputs():
    r = np.random.default_rng(1)
    return [r.standard_normal((5, 7)).astype(np.float32), r.standard_normal((7, 3)).astype(np.float32)]


def compile_for_gpu(p, name, inputs, options):
    """p.compile for a named architecture (NVRTC, no GPU); Skip where NVRTC is not installed."""
    try:
        return p.compile(name, inputs, options)
    except tclib.TCError as e:
        if e.status == tclib.TC_ERROR_UNSUPPORTED and "NVRTC" in e.message:
            raise Skip(e.message.splitlines()[0])
        raise


def run(kernel, inputs):
    outs = [np.zeros(shape, dtype) for dtype, shape in kernel.output_info()]
    kernel.run(inputs, outs)
    return outs


def no_cuda():
    p = tclib.Program(MM)
    A, B = mm_inputs()
    expect_error(lambda: p.compile("mm", [A, B], {"backend": "cuda"}), tclib.TC_ERROR_UNSUPPORTED,
                 "the CUDA driver (libcuda.so.1) was not found", "/nonexistent/libcuda.so.1")
    expect_error(lambda: p.compile("mm", [A, B], {"backend": "cuda", "cuda.arch": "sm_90"}),
                 tclib.TC_ERROR_UNSUPPORTED, "NVRTC", "was not found", "/nonexistent/libnvrtc.so")
    (C,) = run(p.compile("mm", [A, B], EMULATE), [A, B])
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)
    (C,) = run(p.compile("mm", [A, B], {"backend": "cpu"}), [A, B])
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)


def explicit_arch():
    p = tclib.Program(MM)
    A, B = mm_inputs()
    for arch in ("sm_80", "sm_90"):
        route = compile_for_gpu(p, "mm", [A, B], {"backend": "cuda", "cuda.arch": arch})
        k = compile_for_gpu(p, "mm", [A, B], {"backend": "cuda", "cuda.arch": arch, "cuda.contract": "0"})
        # the contraction route by default: blocks of 256 threads, operands copied by cp.async
        described = route.describe()
        assert "contraction route: float32; batch -; M i=5; N j=3; K k=7; tile 32x32x8, 3 stages" in described, described
        assert "mm_k0 grid 1x1x1 block 256x1x1\n    " in described and " 0 bytes spilled" in described, described
        assert 'extern "C" __global__ void mm_k0(' in route.code() and "cp.async.ca.shared.global" in route.code()
        # isl's schedule (cuda.contract=0)
        assert 'extern "C" __global__ void mm_k0(' in k.code(), k.code()[:300]
        # cuda.regtile=auto: no register tile for a 5 x 3 output (8 threads a side cover it)
        assert "tc_acc_" not in k.code() and "tc_acc = fmaf(" in k.code(), k.code()[-3000:]
        described = k.describe()
        assert "backend: cuda (%s cubin, " % arch in described, described
        # ptxas's report: registers, no spills, the two shared tiles, occupancy at the default block
        assert "mm_k0 grid 1x1x1 block 32x8x1\n    " in described, described
        assert re.search(r"\n    \d+ registers, 0 bytes spilled, 0 bytes stack, \d+ bytes shared, occupancy \d+% "
                         r"\(\d+ of 64 warps a SM, \d+ blocks; limit: \w+", described), described
        expect_error(lambda: run(k, [A, B]), tclib.TC_ERROR_SHAPE, "input 'A' is in kDLCPU memory",
                     "kDLCUDA")


def kernel_code():
    p = tclib.Program("""def softmax(float(N,D) X) -> (O) {
  mx(n) max=! X(n,d)
  e(n,d) = exp(X(n,d) - mx(n))
  s(n) +=! e(n,d)
  O(n,d) = e(n,d) / s(n)
}""")
    X = np.random.default_rng(2).standard_normal((6, 9)).astype(np.float32)
    k = p.compile("softmax", [X], dict(EMULATE, **{"cuda.fusion": "min"}))
    code, described = k.code(), k.describe()
    launches = [line for line in described.splitlines() if line.startswith("  softmax_k")]
    assert len(launches) >= 4, described  # min fusion: several kernels
    assert code.count('extern "C" __global__ void softmax_k') == len(launches), code
    assert "backend: cuda (emulated on the host)" in described and "fusion: min" in described, described
    (O,) = run(k, [X])
    e = np.exp(X - X.max(axis=1, keepdims=True))
    np.testing.assert_allclose(O, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def registers():
    p = tclib.Program(MM)
    A, B = mm_inputs()
    for flag, expect in (("1", True), ("0", False)):
        k = p.compile("mm", [A, B], dict(EMULATE, **{"cuda.private": flag, "cuda.contract": "0"}))
        assert ("tc_acc" in k.code()) == expect, (flag, k.code()[-1500:])
        (C,) = run(k, [A, B])
        np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)


def register_tiles():
    p = tclib.Program(MM)
    r = np.random.default_rng(8)
    A, B = r.standard_normal((37, 45)).astype(np.float32), r.standard_normal((45, 29)).astype(np.float32)
    # auto: 8 copies along y (37 values), along x the 4 that 8 threads need for its 29
    for knobs, last, block in (({}, "tc_acc_7_3", "block 8x8x1"), ({"cuda.regtile": "4x4"}, "tc_acc_3_3", "block 8x8x1"),
                               ({"cuda.regtile": "8x8"}, "tc_acc_7_7", "block 8x8x1"),
                               ({"cuda.regtile": "2x8", "cuda.block": "5x3"}, "tc_acc_7_1", "block 5x3x1"),
                               ({"cuda.block": "3x5"}, "tc_acc_7_3", "block 3x5x1"),  # runs of 4 along x, 3 threads
                               ({"cuda.regtile": "12x3", "cuda.block": "2x2"}, "tc_acc_2_11", "block 2x2x1"),
                               ({"cuda.regtile": "1"}, None, "block 32x8x1")):
        k = p.compile("mm", [A, B], dict(EMULATE_ISL, **knobs))
        code, described = k.code().split('extern "C"', 1)[1], k.describe()
        assert "for (int c" in code and not re.search(r"long long [ci]\d", code), code[-3000:]  # 32-bit indices
        if last:
            assert last + " = fmaf(" in code and "values per thread, in registers" in code, (knobs, code[-3000:])
        else:
            assert "tc_acc_" not in code and "tc_acc = fmaf(" in code, (knobs, code[-3000:])
        assert block in described, (knobs, described)
        (C,) = run(k, [A, B])
        np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)
    # Full 64x64 tiles (two of them along N), k tiles of 32 and 6: the registers live across the
    # loop over k tiles (loaded once, stored once); cuda.fma=0 gives the reference's bits there
    # and at the odd sizes (the loop over k tiles then loads and stores them in each tile).
    A2, B2 = r.standard_normal((64, 38)).astype(np.float32), r.standard_normal((38, 128)).astype(np.float32)
    k = p.compile("mm", [A2, B2], EMULATE_ISL)
    assert "C's elements in registers across the loop" in k.code(), k.code()[-3000:]
    assert "const float4 tc_v = *(const float4*)&p_B[" in k.code(), k.code()[-3000:]  # B's rows: 128-bit loads
    # each thread owns runs of 4 adjacent columns: C's registers loaded and stored 4 at a time
    assert "4 * (tc_floord(0, 4) + tc_first(tc_floord(0, 4), threadIdx.x, blockDim.x))" in k.code(), k.code()[-3000:]
    assert "const float4 tc_v = *(const float4*)tc_ptr0;" in k.code(), k.code()[-3000:]
    assert "*(float4*)tc_ptr0 = tc_v;" in k.code(), k.code()[-3000:]
    (C,) = run(k, [A2, B2])
    np.testing.assert_allclose(C, A2 @ B2, rtol=1e-4, atol=1e-4)
    # C 4 bytes past a 16-byte boundary: its runs element by element, the same bits
    out = np.zeros(C.size + 4, np.float32)
    shift = (16 - out.ctypes.data % 16) % 16 // 4 + 1
    C4 = out[shift:shift + C.size].reshape(C.shape)
    assert C4.ctypes.data % 16 == 4, C4.ctypes.data
    k.run([A2, B2], [C4])
    assert C4.tobytes() == C.tobytes()
    # rows of 130: runs in even rows aligned (128-bit), in odd rows not (element by element),
    # the last 2 columns an edge tile
    B5 = r.standard_normal((38, 130)).astype(np.float32)
    (C5,) = run(p.compile("mm", [A2, B5], EMULATE_ISL), [A2, B5])
    np.testing.assert_allclose(C5, A2 @ B5, rtol=1e-4, atol=1e-4)
    # B 4 bytes past a 16-byte boundary: the copy element by element, the same result
    buf = np.zeros(B2.size + 4, np.float32)
    shift = (16 - buf.ctypes.data % 16) % 16 // 4 + 1
    B3 = buf[shift:shift + B2.size].reshape(B2.shape)
    B3[...] = B2
    assert B3.ctypes.data % 16 == 4, B3.ctypes.data
    (C3,) = run(k, [A2, B3])
    assert C3.tobytes() == C.tobytes()
    for a, b in ((A, B), (A2, B2)):
        (expected,) = run(p.compile("mm", [a, b], {"backend": "reference"}), [a, b])
        k = p.compile("mm", [a, b], dict(EMULATE_ISL, **{"cuda.fma": "0"}))
        assert "fmaf(" not in k.code().split('extern "C"', 1)[1], k.code()[-2000:]
        (C,) = run(k, [a, b])
        assert C.tobytes() == expected.tobytes(), np.max(np.abs(C - expected))  # the reference's order and roundings


def bad_options():
    p = tclib.Program(MM)
    A, B = mm_inputs()
    expect_error(lambda: p.compile("mm", [A, B], dict(EMULATE, **{"cuda.block": "64x32"})),
                 tclib.TC_ERROR_INVALID_ARGUMENT, "'cuda.block'", "2048 threads per block")
    expect_error(lambda: tclib.Options({"cuda.tile": "32xx4"}), tclib.TC_ERROR_INVALID_ARGUMENT,
                 "'cuda.tile'", "'32xx4'")
    expect_error(lambda: tclib.Options({"cuda.grid": "1x2x3x4"}), tclib.TC_ERROR_INVALID_ARGUMENT,
                 "'cuda.grid'", "at most 3")
    expect_error(lambda: p.compile("mm", [A, B], {"backend": "cuda", "cuda.arch": "volta"}),
                 tclib.TC_ERROR_INVALID_ARGUMENT, "'cuda.arch'", "'volta'")


def strided_tensors():
    p = tclib.Program(MM)
    r = np.random.default_rng(3)
    A = r.standard_normal((7, 5)).astype(np.float32).T  # strided views
    B = r.standard_normal((3, 7)).astype(np.float32).T
    k = p.compile("mm", [A, B], EMULATE)
    C = np.zeros((3, 5), np.float32).T
    k.run([A, B], [C])
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)


# Contractions the route takes (contraction/gemm.h), against the reference backend: index
# orders, batch and multi-index groups, odd sizes (partial tiles, K not a multiple of 8), empty
# groups, float64, epilogues, `+=` adding to O's entries, a temporary between stages, every tile
# and pipeline depth, and operands 4 bytes past a 16-byte boundary (the 16-byte copies' other path).
ROUTE_CASES = [
    ("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", [(37, 13), (13, 29)]),
    ("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", [(65, 16), (16, 132)]),
    ("def tmm(float(M,K) A, float(N,K) B) -> (C) { C(m,n) +=! A(m,k) * B(n,k) }", [(70, 33), (50, 33)]),
    ("def t2(float(K,M) A, float(N,K) B) -> (C) { C(m,n) +=! A(k,m) * B(n,k) }", [(21, 72), (40, 21)]),
    ("def tbmm(float(B,N,K) X, float(B,M,K) Y) -> (Z) { Z(b,n,m) +=! X(b,n,k) * Y(b,m,k) }", [(3, 26, 72), (3, 26, 72)]),
    ("def c4(float(F,B,E,A) X, float(E,C,F,D) Y) -> (Z) { Z(d,c,b,a) +=! X(f,b,e,a) * Y(e,c,f,d) }",
     [(5, 6, 7, 8), (7, 4, 5, 9)]),
    ("def dot(float(K) A, float(K) B) -> (C) { C() +=! A(k) * B(k) }", [(19,), (19,)]),
    ("def outer(float(M) A, float(N) B) -> (C) { C(i,j) +=! A(i) * B(j) }", [(9,), (12,)]),
    ("def empty(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", [(4, 0), (0, 5)]),
    ("def fcrelu(float(B,K) I, float(N,K) W, float(N) bias) -> (O) {\n  O(b,n) +=! I(b,k) * W(n,k)\n"
     "  O(b,n) = fmax(O(b,n) + bias(n), 0)\n}", [(9, 20), (30, 20), (30,)]),
    ("def mlp2(float(B,M) I, float(O,M) W1, float(P,O) W2) -> (Y) {\n  H(b,o) +=! I(b,m) * W1(o,m)\n"
     "  H(b,o) = -H(b,o) * 0.5\n  Y(b,p) +=! H(b,p2) * W2(p,p2) where p2 in 0:O\n}", [(6, 11), (10, 11), (7, 10)]),
    ("def mmd(double(M,K) A, double(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", [(37, 13), (13, 30)]),
    # convolutions as implicit GEMMs (affine subscripts)
    ("def conv2d(float(N,C,H,W) I, float(M,C,KH,KW) W1) -> (O) {\n  O(n,m,h,w) +=! I(n,c,h + kh,w + kw) * W1(m,c,kh,kw)\n}",
     [(2, 3, 9, 10), (5, 3, 3, 2)]),
    ("def gconv(float(N,G,C,H,W) I, float(G,F,C,KH,KW) W1) -> (O) {\n"
     "  O(n,g,f,h,w) +=! I(n,g,c,h + kh,w + kw) * W1(g,f,c,kh,kw)\n}", [(2, 3, 2, 7, 8), (3, 4, 2, 3, 3)]),
    ("def sconv(float(N,H,W) I, float(KH,KW) W1) -> (O) {\n"
     "  O(n,h,w) +=! I(n,2 * h + kh + 1,w + kw) * W1(kh,kw) where h in 0:4, w in 0:5\n}", [(3, 12, 9), (3, 3)]),
    ("def corr(float(N) A, float(K) B) -> (C) { C(i) +=! A(i + k) * B(k) }", [(40,), (7,)]),
]


def contraction_route():
    r = np.random.default_rng(11)
    for source, shapes in ROUTE_CASES:
        p = tclib.Program(source)
        name = source.split()[1].split("(")[0]
        dtype = np.float64 if "double" in source else np.float32
        inputs = [r.standard_normal(s).astype(dtype) for s in shapes]
        (expected,) = run(p.compile(name, inputs, {"backend": "reference"}), inputs)
        tol = 1e-12 if dtype == np.float64 else 1e-4
        tiles = ["auto", "32x32x8", "64x128x8"] + (["128x128x8"] if dtype == np.float32 else [])
        splits = [{"cuda.split_k": "3"}, {"cuda.split_k": "2", "cuda.gemm_tile": "32x32x8", "cuda.stages": "2"}]
        for knobs in [{"cuda.gemm_tile": t} for t in tiles] + [{"cuda.stages": "2"}, {"cuda.stages": "4"}] + splits:
            k = p.compile(name, inputs, dict(EMULATE, **knobs))
            assert "contraction route: " in k.describe(), (source, k.describe())
            (got,) = run(k, inputs)
            np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg="%s %s" % (source, knobs))
    # cuda.fma=0: the reference's order and roundings, bit for bit
    p = tclib.Program(ROUTE_CASES[0][0])
    A, B = r.standard_normal((37, 13)).astype(np.float32), r.standard_normal((13, 29)).astype(np.float32)
    (expected,) = run(p.compile("mm", [A, B], {"backend": "reference"}), [A, B])
    (got,) = run(p.compile("mm", [A, B], dict(EMULATE, **{"cuda.fma": "0"})), [A, B])
    assert got.tobytes() == expected.tobytes()
    # `+=` adds to O's entries (the output passed in), split or not
    acc = tclib.Program("def acc(float(M,K) A, float(K,N) B) -> (C) { C(i,j) += A(i,k) * B(k,j) }")
    for knobs in ({}, {"cuda.split_k": "4"}):
        k = acc.compile("acc", [A, B], dict(EMULATE, **knobs))
        assert "(adding to O)" in k.describe(), k.describe()
        C = r.standard_normal((37, 29)).astype(np.float32)
        start = C.copy()
        k.run([A, B], [C])
        np.testing.assert_allclose(C, start + A @ B, rtol=1e-4, atol=1e-4)
    # split-K by default where the tiles are few and the sum long: 1 tile of 32 x 32, K = 1024 in
    # 8 parts (second launch: the parts in order, then the epilogue); the scratch buffer described
    fc = tclib.Program("def fc(float(B,K) I, float(N,K) W, float(N) b) -> (O) {\n  O(i,n) +=! I(i,k) * W(n,k)\n"
                       "  O(i,n) = fmax(O(i,n) + b(n), 0)\n}")
    I, W, bias = (r.standard_normal(sh).astype(np.float32) for sh in ((30, 1024), (20, 1024), (20,)))
    k = fc.compile("fc", [I, W, bias], EMULATE)
    described = k.describe()
    assert "tile 32x32x8, 3 stages, the sum split in 8 parts" in described, described
    assert "scratch: %d bytes" % (8 * 30 * 20 * 4) in described and "fc_k1 grid 3x1x1 block 256x1x1" in described, described
    (O,) = run(k, [I, W, bias])
    np.testing.assert_allclose(O, np.maximum(I @ W.T + bias, 0), rtol=1e-4, atol=1e-4)
    (f0, f1) = tclib.profile_figures(k.profile([I, W, bias], [np.zeros((30, 20), np.float32)]))
    assert f0["fma"] == str(32 * 32 * 1024) and f1["kernel"] == "fc_k1", (f0, f1)  # the whole tile's
    assert f1["shared_requests"] == "0" and int(f1["dram_bytes"]) >= 8 * 30 * 20 * 4, f1  # the parts: global memory
    assert "the sum split" not in fc.compile("fc", [I, W, bias], dict(EMULATE, **{"cuda.fma": "0"})).describe()
    # a 128 x 128 tile's block is alone on its SM: its sum split in the fewest parts with the
    # fewest waves per part (1024^3: 64 tiles in 2 parts, one wave of 128 blocks for 132 SMs, where 3
    # parts made two waves; 768^3: 36 tiles in 3 parts), unless cuda.gemm_blocks caps the registers
    # for more blocks an SM (then enough parts for 132 blocks: 3)
    big = lambda n: [np.zeros((n, n), np.float32)] * 2
    for n, knobs, parts, bounds in ((1024, {}, 2, None), (768, {}, 3, None), (1024, {"cuda.gemm_blocks": "2"}, 3, 2)):
        k = p.compile("mm", big(n), dict(EMULATE, **knobs))
        assert "tile 128x128x8, 3 stages%s, the sum split in %d parts" % (
            ", registers for 2 blocks an SM" if bounds else "", parts) in k.describe(), (n, knobs, k.describe())
        assert ("__launch_bounds__(256, 2) mm_k0(" in k.code()) == (bounds == 2), k.code()[-4000:]
    # the bound changes no result (the emulation runs the same text)
    k = p.compile("mm", [A, B], dict(EMULATE, **{"cuda.gemm_blocks": "2", "cuda.gemm_tile": "128x128x8"}))
    (got,) = run(k, [A, B])
    np.testing.assert_allclose(got, A @ B, rtol=1e-4, atol=1e-4)
    # operands and output 4 bytes past a 16-byte boundary: their runs copied element by element
    A2, B2 = r.standard_normal((64, 24)).astype(np.float32), r.standard_normal((24, 64)).astype(np.float32)
    k = p.compile("mm", [A2, B2], dict(EMULATE, **{"cuda.gemm_tile": "64x64x8"}))
    assert "tc_copy_16(" in k.code() and "*(float4*)&p_C[" in k.code(), k.code()[-3000:]
    def shifted(a):
        buf = np.zeros(a.size + 4, np.float32)
        at = (16 - buf.ctypes.data % 16) % 16 // 4 + 1
        view = buf[at:at + a.size].reshape(a.shape)
        view[...] = a
        assert view.ctypes.data % 16 == 4
        return view
    (C,) = run(k, [A2, B2])
    C3 = shifted(np.zeros_like(C))
    k.run([shifted(A2), shifted(B2)], [C3])
    assert C3.tobytes() == C.tobytes()
    np.testing.assert_allclose(C, A2 @ B2, rtol=1e-4, atol=1e-4)
    # bad tile names
    expect_error(lambda: p.compile("mm", [A, B], dict(EMULATE, **{"cuda.gemm_tile": "128x128x16"})),
                 tclib.TC_ERROR_INVALID_ARGUMENT, "'cuda.gemm_tile'", "'128x128x16'", "64x64x8")
    d = tclib.Program(next(src for src, _ in ROUTE_CASES if src.startswith("def mmd")))
    Ad, Bd = A.astype(np.float64), B.astype(np.float64)
    expect_error(lambda: d.compile("mmd", [Ad, Bd], dict(EMULATE, **{"cuda.gemm_tile": "128x128x8"})),
                 tclib.TC_ERROR_INVALID_ARGUMENT, "'cuda.gemm_tile'", "float64 contraction")
    # float16 and bfloat16 on tensor cores (the emulation runs mma.sync's fragments lane by lane):
    # float32 sums of the exact products, rounded once: within half an ulp of the output's type
    # of the exact result (the reference rounds every step); cuda.fma=0 keeps the reference's bits.
    # Every tile: 64x64x16 (4 warps of 32 x 32), 128x128x16 and x32 (8 warps of 64 x 32, two mma
    # steps a stage); operands whose K is contiguous ([row][step] tiles, 16-byte copies along K
    # where K's extent allows) or whose rows are ([step][row] tiles, halves paired per fragment
    # register), partial tiles, a batch.
    for tc_type, to_type, from_type, ulp in (("float16", lambda x: x.astype(np.float16), lambda x: x.astype(F64), 2.0**-10),
                                             ("bfloat16", tclib.bf16, tclib.from_bf16, 2.0**-7)):
        for src, shapes, tile in (("def mm(T(M,K) A, T(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", [(37, 21), (21, 70)], "auto"),
                                  ("def mm(T(M,K) A, T(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", [(136, 64), (64, 72)],
                                   "128x128x32"),
                                  ("def mm(T(M,K) A, T(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", [(70, 40), (40, 130)],
                                   "128x128x16"),
                                  ("def tb(T(B,N,K) X, T(B,M,K) Y) -> (Z) { Z(b,n,m) +=! X(b,n,k) * Y(b,m,k) }",
                                   [(2, 65, 33), (2, 9, 33)], "auto"),
                                  ("def tb(T(B,N,K) X, T(B,M,K) Y) -> (Z) { Z(b,n,m) +=! X(b,n,k) * Y(b,m,k) }",
                                   [(2, 65, 48), (2, 20, 48)], "128x128x32")):
            src = src.replace("T(", tc_type + "(")
            name = src.split()[1].split("(")[0]
            prog = tclib.Program(src)
            ins = [to_type(r.standard_normal(sh).astype(np.float32)) for sh in shapes]
            k = prog.compile(name, ins, dict(EMULATE, **{"cuda.gemm_tile": tile}))
            assert "tensor cores (mma.sync)" in k.describe() and "mma.sync.aligned.m16n8k16" in k.code(), k.describe()
            if tile != "auto":
                assert "tile %s, tensor cores (mma.sync), %d stages" % (tile, 2 if tile.endswith("32") else 3) in k.describe()
            (got,) = run(k, ins)
            a, b = (from_type(x).astype(F64) for x in ins)
            exact = a @ b if name == "mm" else np.einsum("bnk,bmk->bnm", a, b)
            assert np.all(np.abs(from_type(got).astype(F64) - exact) <= ulp * np.maximum(np.abs(exact), 1) + 1e-3), (name, tile)
            (ref,) = run(prog.compile(name, ins, {"backend": "reference"}), ins)
            (bits,) = run(prog.compile(name, ins, dict(EMULATE, **{"cuda.fma": "0"})), ins)
            assert bits.tobytes() == ref.tobytes(), tc_type
    # float32 as TF32 on tensor cores (cuda.tf32=1): each operand value rounded to TF32 (10 bits,
    # ties away from zero), the products summed in float32: the exact sum of the rounded values
    # within float32's accumulation error, every route case within TF32's error of the reference.
    def tf32(x):
        u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        return np.where((u & 0x7f800000) == 0x7f800000, u, (u + 0x1000) & 0xffffe000).astype(np.uint32).view(np.float32)
    TF32 = dict(EMULATE, **{"cuda.tf32": "1"})
    A2, B2 = r.standard_normal((130, 70)).astype(np.float32), r.standard_normal((70, 66)).astype(np.float32)
    k = p.compile("mm", [A2, B2], TF32)
    assert "tile 64x64x8, tensor cores (mma.sync, TF32), 3 stages" in k.describe(), k.describe()
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in k.code() and "cvt.rna.tf32.f32" in k.code()
    (C2,) = run(k, [A2, B2])
    np.testing.assert_allclose(C2, tf32(A2).astype(F64) @ tf32(B2).astype(F64), rtol=0, atol=1e-4)
    assert np.max(np.abs(C2 - A2.astype(F64) @ B2.astype(F64))) > 1e-3  # the rounding is there
    A3, B3 = r.standard_normal((136, 64)).astype(np.float32), r.standard_normal((64, 72)).astype(np.float32)
    k = p.compile("mm", [A3, B3], dict(TF32, **{"cuda.gemm_tile": "128x128x16"}))
    assert "tile 128x128x16, tensor cores (mma.sync, TF32), 2 stages" in k.describe(), k.describe()
    (C3,) = run(k, [A3, B3])
    np.testing.assert_allclose(C3, tf32(A3).astype(F64) @ tf32(B3).astype(F64), rtol=0, atol=1e-4)
    for source, shapes in ROUTE_CASES:
        if "double" in source or any(0 in sh for sh in shapes):
            continue
        prog = tclib.Program(source)
        name = source.split()[1].split("(")[0]
        ins = [r.standard_normal(sh).astype(np.float32) for sh in shapes]
        (expected,) = run(prog.compile(name, ins, {"backend": "reference"}), ins)
        (got,) = run(prog.compile(name, ins, TF32), ins)
        np.testing.assert_allclose(got, expected, rtol=2e-2, atol=2e-2, err_msg=source)
    fma0 = p.compile("mm", [A2, B2], dict(TF32, **{"cuda.fma": "0"})).describe()
    assert "TF32" not in fma0 and "3 stages" in fma0, fma0  # the reference's bits: no TF32
    expect_error(lambda: p.compile("mm", [A2, B2], dict(TF32, **{"cuda.gemm_tile": "128x128x8"})),
                 tclib.TC_ERROR_INVALID_ARGUMENT, "'cuda.gemm_tile'", "(cuda.tf32=1)", "allowed: auto, 128x128x16, 64x64x8")
    # cuda.contract=0: isl's schedule; a def that is no contraction: isl's schedule, described so
    assert "contraction route" not in p.compile("mm", [A, B], EMULATE_ISL).describe()
    relu = tclib.Program("def relu(float(N) X) -> (Y) { Y(i) = fmax(X(i), 0) }")
    assert "contraction route" not in relu.compile("relu", [A[0]], EMULATE).describe()


def shared_memory():
    p = tclib.Program(MM)
    r = np.random.default_rng(5)
    A, B = r.standard_normal((37, 45)).astype(np.float32), r.standard_normal((45, 29)).astype(np.float32)
    for knobs in ({}, {"cuda.tile": "16x8x8", "cuda.block": "5x3", "cuda.grid": "2x3"}):
        k = p.compile("mm", [A, B], dict(EMULATE_ISL, **{"cuda.shared": "1"}, **knobs))
        code = k.code()
        assert code.count("__shared__ float tc_shared") == 2, (knobs, code[-3000:])
        # two barriers a copy of the tiles; the default register tiles print the loop twice (hoisted())
        assert code.count("__syncthreads();") in (2, 4), code[-3000:]
        (C,) = run(k, [A, B])
        np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)
    assert "__shared__" not in p.compile("mm", [A, B], dict(EMULATE_ISL, **{"cuda.shared": "0"})).code()
    add = tclib.Program("def add(float(N,M) X, float(N,M) Y) -> (Z) { Z(i,j) = X(i,j) + Y(i,j) }")
    X = r.standard_normal((9, 7)).astype(np.float32)
    k = add.compile("add", [X, X], dict(EMULATE, **{"cuda.shared": "1"}))
    assert "__shared__ " not in k.code().split("#define __shared__")[-1], k.code()[-2000:]
    lut = tclib.Program("def lut(float(E,D) LUT, int32(B,L) I) -> (O) { O(b,d) +=! LUT(I(b,l), d) }")
    table, index = r.standard_normal((6, 4)).astype(np.float32), np.array([[0, 5], [2, 1], [3, 3]], np.int32)
    k = lut.compile("lut", [table, index], dict(EMULATE, **{"cuda.shared": "1"}))
    assert "__shared__ float" not in k.code(), k.code()[-2000:]  # LUT: its index is a gather
    (O,) = run(k, [table, index])
    np.testing.assert_allclose(O, table[index].sum(axis=1), rtol=1e-5, atol=1e-5)


def unroll():
    p = tclib.Program(MM)
    r = np.random.default_rng(6)
    A, B = r.standard_normal((19, 22)).astype(np.float32), r.standard_normal((22, 13)).astype(np.float32)
    for factor, unrolled in (("4", True), ("2", False)):
        k = p.compile("mm", [A, B], dict(EMULATE_ISL, **{"cuda.tile": "8x8x4", "cuda.unroll": factor}))
        code = k.code()
        assert ("for (int c5" not in code) == unrolled, (factor, code[-3000:])
        assert "tc_acc" in code, code[-3000:]
        (C,) = run(k, [A, B])
        np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)


def lane_reductions():
    r = np.random.default_rng(7)
    markers = {"tree": "tc_warp_totals[tc_warp_index()].f32 = tc_acc", "atomic": "tc_atomic_update("}
    for how, block in (("tree", "auto"), ("atomic", "auto"), ("tree", "64x4"), ("atomic", "64x4"), ("tree", "256"),
                       ("tree", "96x2")):
        marker = markers[how]
        lanes = dict(EMULATE_ISL, **{"cuda.reduction": how, "cuda.block": block})
        p = tclib.Program(MM)
        A, B = r.standard_normal((23, 170)).astype(np.float32), r.standard_normal((170, 9)).astype(np.float32)
        k = p.compile("mm", [A, B], dict(lanes, **{"cuda.tile": "8x8x128"}))
        code = k.code()
        assert "tc_group_sync();" in code and marker in code, (how, code[-3000:])
        assert "tc_acc = tc_add(tc_acc, tc_shfl_down(tc_acc, tc_off))" in code or how == "atomic", code[-3000:]
        (C,) = run(k, [A, B])
        np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)
        rows = tclib.Program("def rowsum(int32(N,K) X) -> (S) { S(n) +=! X(n,k) }")
        X = r.integers(-1000, 1000, (5, 1000)).astype(np.int32)
        k = rows.compile("rowsum", [X], lanes)
        assert marker.replace(".f32", ".s32") in k.code(), k.code()[-2000:]
        (S,) = run(k, [X])
        np.testing.assert_array_equal(S, X.sum(axis=1, dtype=np.int32))
        mx = tclib.Program("def rowmax(float(N,K) X) -> (M) { M(n) max=! X(n,k) }")
        Y = r.standard_normal((4, 77)).astype(np.float32)
        Y[2, 40] = np.nan
        (M,) = run(mx.compile("rowmax", [Y], lanes), [Y])
        np.testing.assert_array_equal(M, Y.max(axis=1))
        prod = tclib.Program("def rowprod(int8(N,K) X) -> (P) { P(n) *=! X(n,k) }")
        Z = r.integers(-3, 4, (3, 45)).astype(np.int8)
        (P,) = run(prod.compile("rowprod", [Z], lanes), [Z])
        np.testing.assert_array_equal(P, np.prod(Z.astype(np.int64), axis=1).astype(np.int8))
        hmin = tclib.Program("def rowmin(float16(N,K) X) -> (H) { H(n) min=! X(n,k) }")
        W = r.standard_normal((3, 50)).astype(np.float16)
        (H,) = run(hmin.compile("rowmin", [W], lanes), [W])
        np.testing.assert_array_equal(H, W.min(axis=1))
        bmax = tclib.Program("def rowmax(bf16(N,K) X) -> (H) { H(n) max=! X(n,k) }")
        V = tclib.bf16(r.standard_normal((3, 50)))
        (H,) = run(bmax.compile("rowmax", [V], lanes), [V])
        np.testing.assert_array_equal(H, tclib.bf16(tclib.from_bf16(V).max(axis=1)))  # bits
        expect_error(lambda: p.compile("mm", [A, B], dict(lanes, **{"cuda.block": "16x8"})),
                     tclib.TC_ERROR_INVALID_ARGUMENT, "'cuda.reduction'", "'cuda.block' is '16x8'",
                     "a multiple of 32")
        expect_error(lambda: p.compile("mm", [A, B], dict(lanes, **{"cuda.block": "64x4x4"})),
                     tclib.TC_ERROR_INVALID_ARGUMENT, "'cuda.reduction'", "'cuda.block' is '64x4x4'",
                     "y times z must be at most 15")
    # One warp along x with 32 rows (32x32): no named barrier needed, so allowed.
    p = tclib.Program(MM)
    A, B = r.standard_normal((40, 50)).astype(np.float32), r.standard_normal((50, 33)).astype(np.float32)
    (C,) = run(p.compile("mm", [A, B], dict(EMULATE_ISL, **{"cuda.reduction": "tree", "cuda.block": "32x32"})), [A, B])
    np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)


def small_grids():
    r = np.random.default_rng(11)
    here = os.path.dirname(os.path.abspath(__file__))
    lut = tclib.Program(open(os.path.join(here, "..", "..", "bench", "kernels", "lut1.tc")).read())

    def compiled(e, b, l, knobs=None):
        table = r.standard_normal((e, 64)).astype(np.float32)
        index = r.integers(0, e, (b, l)).astype(np.int32)
        return lut.compile("lut1", [table, index], dict(EMULATE, **(knobs or {}))), table, index
    k, _, _ = compiled(100000, 128, 50)
    assert "lut1_k0 grid 2x16x1 block 32x8x1" in k.describe(), k.describe()  # 128 x 64 outputs: 8 x 32 tiles
    k, _, _ = compiled(100000, 128, 50, {"cuda.tile": "32x32"})
    assert "lut1_k0 grid 2x4x1 block 32x8x1" in k.describe(), k.describe()  # as given
    k, _, _ = compiled(1000, 4096, 5)
    assert "lut1_k0 grid 2x128x1 block 32x8x1" in k.describe(), k.describe()  # 256 blocks: enough
    k, table, index = compiled(997, 75, 13)
    assert "lut1_k0 grid 2x10x1" in k.describe(), k.describe()
    (got,) = run(k, [table, index])
    np.testing.assert_allclose(got, table[index].astype(F64).sum(axis=1), rtol=1e-5, atol=1e-5)


def row_route():
    r = np.random.default_rng(5)
    here = os.path.dirname(os.path.abspath(__file__))
    bench = os.path.join(here, "..", "..", "bench", "kernels")
    softmax = tclib.Program(open(os.path.join(bench, "softmax.tc")).read())
    layernorm = tclib.Program(open(os.path.join(bench, "layernorm.tc")).read())

    def same(program, name, inputs, knobs, tol=1e-5, route=True):
        k = program.compile(name, inputs, dict(EMULATE, **knobs))
        described = k.describe()
        assert ("row route: " in described) == route, (name, knobs, described)
        if route:
            assert "%s_rows grid" % name in described and "tc_group_sync();" in k.code(), described
        got = run(k, inputs)
        expected = run(program.compile(name, inputs, {"backend": "reference"}), inputs)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(np.asarray(g, F64), np.asarray(e, F64), rtol=tol, atol=tol,
                                       err_msg="%s %s" % (name, knobs))
        return k

    X = r.standard_normal((37, 75)).astype(np.float32)
    k = same(softmax, "softmax", [X], {})
    assert "row route: 2 reduced along the row, 2 pointwise; 37 rows (37), up to 75 values along a row; " \
           "1 rows a block, 96 threads a row" in k.describe(), k.describe()
    for block, grid in (("32x4", "auto"), ("64x2", "auto"), ("96", "5")):
        k = same(softmax, "softmax", [X], {"cuda.block": block, "cuda.grid": grid})
        assert "grid %sx1x1 block %s" % ("5" if grid == "5" else str(-(-37 // int((block + "x1").split("x")[1]))),
                                          {"32x4": "32x4x1", "64x2": "64x2x1", "96": "96x1x1"}[block]) in k.describe()
    L = [r.standard_normal(s).astype(np.float32) for s in ((5, 200), (200,), (200,))]
    same(layernorm, "layernorm", L, {})
    two = tclib.Program("def f(float(A,B,C) X) -> (S, M) {\n  S(a,b) +=! X(a,b,c) * X(a,b,c)\n"
                        "  M(a,b) max=! X(a,b,c) / S(a,b)\n}")
    k = same(two, "f", [r.standard_normal((3, 7, 50)).astype(np.float32)], {})
    assert "21 rows (3x7)" in k.describe(), k.describe()
    isum = tclib.Program("def f(int32(A,C) X) -> (S) { S(a) +=! X(a,c) }")
    Xi = r.integers(-1000, 1000, (9, 300)).astype(np.int32)
    (S,) = run(isum.compile("f", [Xi], dict(EMULATE, **{"cuda.fma": "0"})), [Xi])  # exact: on the route at fma=0 too
    np.testing.assert_array_equal(S, Xi.sum(axis=1, dtype=np.int32))
    assert "row route" in isum.compile("f", [Xi], dict(EMULATE, **{"cuda.fma": "0"})).describe()
    half = tclib.Program("def f(float16(A,C) X) -> (S, O) { S(a) +=! X(a,c)  O(a,c) = X(a,c) - S(a) }")
    same(half, "f", [r.standard_normal((9, 64)).astype(np.float16)], {}, tol=0.1)
    part = tclib.Program("def f(float(A,C) X) -> (S) { S(a) +=! X(a,c) where c in 3:250 }")
    same(part, "f", [r.standard_normal((9, 300)).astype(np.float32)], {})
    again = tclib.Program("def f(float(A,C) X, float(A,C) Y) -> (S) { S(a) +=! X(a,c)  S(a) += Y(a,c) * 2 }")
    same(again, "f", [r.standard_normal((4, 90)).astype(np.float32) for _ in range(2)], {})
    gather = tclib.Program("def f(float(A,C) X, int32(B) I) -> (S) { S(b) +=! X(I(b), c) }")
    Xg, I = r.standard_normal((6, 40)).astype(np.float32), np.array([5, 0, 3, 3], np.int32)
    same(gather, "f", [Xg, I], {})
    bad = np.array([5, 0, 6, 3], np.int32)
    k = gather.compile("f", [Xg, bad], EMULATE)
    assert "row route" in k.describe(), k.describe()
    expect_error(lambda: run(k, [Xg, bad]), tclib.TC_ERROR_RUNTIME, "'X(I(b), c)' reads 'X' out of bounds", "index 6")

    # What auto leaves to isl, and what cuda.rowwise=1 does with it.
    short = r.standard_normal((40, 8)).astype(np.float32)
    same(softmax, "softmax", [short], {}, route=False)
    same(softmax, "softmax", [short], {"cuda.rowwise": "1"})
    mm = tclib.Program("def mm(int32(M,K) A, int32(N,K) B) -> (C) { C(i,j) +=! A(i,k) * B(j,k) }")
    Ai, Bi = r.integers(-9, 9, (5, 40)).astype(np.int32), r.integers(-9, 9, (6, 40)).astype(np.int32)
    same(mm, "mm", [Ai, Bi], {}, route=False)
    same(mm, "mm", [Ai, Bi], {"cuda.rowwise": "1"})
    same(softmax, "softmax", [X], {"cuda.fma": "0"}, route=False)
    same(softmax, "softmax", [X], {"cuda.block": "16x8"}, route=False)
    same(softmax, "softmax", [X], {"cuda.rowwise": "0"}, route=False)
    for block, why in (("16x8", "a multiple of 32"), ("32x2x2", "its z must be 1"), ("64x16", "at most 15")):
        expect_error(lambda: softmax.compile("softmax", [X], dict(EMULATE, **{"cuda.rowwise": "1", "cuda.block": block})),
                     tclib.TC_ERROR_INVALID_ARGUMENT, "'cuda.rowwise' is 1", "'cuda.block' is '%s'" % block, why)

    # The static target: coalesced and balanced at the benchmark's size.
    Xb = r.standard_normal((128, 1000)).astype(np.float32)
    k = softmax.compile("softmax", [Xb], EMULATE)
    (f,) = tclib.profile_figures(k.profile([Xb], [np.zeros((128, 1000), np.float32)], "h200"))
    sectors = float(re.search(r"([\d.]+)", f["sectors_per_request"]).group(1))
    assert sectors <= 5 and float(f["work_balance"]) <= 1.5, f


def blas_route():
    p = tclib.Program(MM)
    A, B = mm_inputs()
    blas = {"cuda.blas": "1"}
    # Emulated: the generated kernel, and why.
    k = p.compile("mm", [A, B], dict(EMULATE, **blas))
    assert "library route (cuda.blas): not taken: the emulation runs on the host, cuBLAS on a GPU" in k.describe()
    (C,) = run(k, [A, B])
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)
    k = compile_for_gpu(p, "mm", [A, B], {"backend": "cuda", "cuda.arch": "sm_90", **blas})
    described = k.describe()
    if "cuBLAS was not found" not in described:  # the toolkit's cuBLAS loads with no GPU
        assert "library route (cuda.blas): cublasGemmStridedBatchedEx, float32, column-major: C (3 x 5, ld 3) = " \
               "B (ld 3) * A (ld 7), k 7, cuBLAS " in described, described
        assert "; the launches below are not run\n" in described, described
    assert "mm_k0 grid" in described, described  # the generated kernel is still made: the fallback
    assert "library route" not in p.compile("mm", [A, B], {"backend": "cuda", "cuda.arch": "sm_90"}).describe()
    fma0 = p.compile("mm", [A, B], {"backend": "cuda", "cuda.arch": "sm_90", "cuda.fma": "0", **blas}).describe()
    assert "library route (cuda.blas): not taken: cuda.fma=0 asks for the reference's bits" in fma0, fma0
    fc = tclib.Program("def fcrelu(float(B,K) I, float(N,K) W, float(N) bias) -> (O) {\n  O(b,n) +=! I(b,k) * W(n,k)\n"
                       "  O(b,n) = fmax(O(b,n) + bias(n), 0)\n}")
    I, W, bias = A, np.ones((4, 7), np.float32), np.zeros(4, np.float32)
    d = fc.compile("fcrelu", [I, W, bias], {"backend": "cuda", "cuda.arch": "sm_90", **blas}).describe()
    if "cuBLAS was not found" not in d:
        assert "library route (cuda.blas): cublasLtMatmul, float32, column-major: O (4 x 5, ld 4) = W^T (ld 7) * I " \
               "(ld 7), k 7, then + bias along the rows, then max(x, 0), cuBLAS " in d, d
    scaled = tclib.Program("def f(float(B,K) I, float(N,K) W) -> (O) {\n  O(b,n) +=! I(b,k) * W(n,k)\n"
                           "  O(b,n) = O(b,n) * 2\n}")
    d = scaled.compile("f", [I, W], {"backend": "cuda", "cuda.arch": "sm_90", **blas}).describe()
    assert "library route (cuda.blas): not taken: the epilogue is not x + bias, then max(x, 0)" in d, d


def blas_route_missing():
    p = tclib.Program(MM)
    A, B = mm_inputs()
    k = compile_for_gpu(p, "mm", [A, B], {"backend": "cuda", "cuda.arch": "sm_90", "cuda.blas": "1"})
    described = k.describe()
    assert "library route (cuda.blas): not taken: cuBLAS was not found; tried:" in described, described
    assert "/nonexistent/libcublas.so.13" in described and "mm_k0 grid" in described, described


def no_host_compiler():
    p = tclib.Program(MM)
    A, B = mm_inputs()
    expect_error(lambda: p.compile("mm", [A, B], EMULATE), tclib.TC_ERROR_COMPILE,
                 "the cuda emulation's host compile failed", "/nonexistent/c++")
    left = os.listdir(os.environ["TMPDIR"])
    assert not left, "left in TMPDIR: %s" % left


def profile():
    p = tclib.Program(MM)
    r = np.random.default_rng(3)
    A, B = r.standard_normal((64, 48)).astype(np.float32), r.standard_normal((48, 64)).astype(np.float32)
    # The contraction route: 4 blocks of 32 x 32 outputs, 2 x 2 a thread; A's rows copied 8
    # floats a row per warp (4-byte cp.async), B's 16 bytes a thread, C's written 8 bytes a thread.
    route = p.compile("mm", [A, B], EMULATE)
    text = route.profile([A, B], [np.zeros((64, 64), np.float32)])
    (f,) = tclib.profile_figures(text)
    assert f["blocks_profiled"] == "4" and f["fma"] == str(64 * 48 * 64), f
    assert f["statement_instances"] == f["fma"] and f["work_balance"] == "1.00", f
    sectors, ideal = re.search(r"\n  sectors_per_request ([\d.]+) \(ideal ([\d.]+)\)", text).groups()
    assert float(sectors) <= 1.25 * float(ideal), f  # coalesced
    assert float(f["bank_conflict_ways"]) < 1.1, f

    # isl's schedule: a matmul in one block (32 x 32 outputs, the whole tile of 8 x 8 threads of
    # 4 x 4 values: a text NVRTC compiles for the occupancy in a second, where 64 x 64's 8 x 8
    # values took 14 s): every block profiled, counts exact.
    A32, B32 = A[:32].copy(), B[:, :32].copy()
    k = p.compile("mm", [A32, B32], EMULATE_ISL)
    code = k.code()
    text = k.profile([A32, B32], [np.zeros((32, 32), np.float32)])
    (f,) = tclib.profile_figures(text)
    assert f["blocks_profiled"] == "1", text
    assert f["fma"] == str(32 * 48 * 32), text
    assert int(f["statement_instances"]) >= 32 * 48 * 32, text
    assert float(f["work_balance"]) < 1.5, text
    assert float(f["bank_conflict_ways"]) < 1.1, text  # padded shared rows
    assert int(f["min_dram_bytes"]) == 4 * (32 * 48 + 48 * 32 + 32 * 32), text
    assert re.search(r"\nestimated_us [\d.]+ on h100: H100 SXM .*not a measurement\n$", text), text
    assert "TC_STATEMENT" not in k.code() and k.code() == code, "the kernel's text changed"
    assert "tc_acc_3_3 = fmaf(" in code and "tc_acc_4_" not in code, "not 4 x 4 values a thread"
    (C,) = run(k, [A32, B32])  # still runs whole after a profile
    np.testing.assert_allclose(C, A32 @ B32, rtol=1e-4, atol=1e-4)

    # A product 4 wide in a register tile of 8 copies along x: one thread in 8 has work (auto
    # gives this product 1 copy along x: work_balance 1).
    B4 = B[:, :4].copy()
    k = p.compile("mm", [A, B4], dict(EMULATE_ISL, **{"cuda.regtile": "8x1"}))
    (f,) = tclib.profile_figures(k.profile([A, B4], [np.zeros((64, 4), np.float32)]))
    assert f["work_balance"] == "8.00" and f["fma"] == str(64 * 48 * 4), f
    (f,) = tclib.profile_figures(p.compile("mm", [A, B4], EMULATE_ISL).profile([A, B4], [np.zeros((64, 4), np.float32)]))
    assert f["work_balance"] == "1.00" and f["fma"] == str(64 * 48 * 4), f

    # Rows copied (consecutive lanes, consecutive floats) against a transpose (a column read).
    X = r.standard_normal((256, 256)).astype(np.float32)
    copy = tclib.Program("def copy(float(N,M) X) -> (Y) { Y(i,j) = X(i,j) }").compile("copy", [X], EMULATE)
    tr = tclib.Program("def tr(float(N,M) X) -> (Y) { Y(j,i) = X(i,j) }").compile(
        "tr", [X], dict(EMULATE, **{"cuda.shared": "0"}))
    (fc,) = tclib.profile_figures(copy.profile([X], [np.zeros((256, 256), np.float32)]))
    (ft,) = tclib.profile_figures(tr.profile([X], [np.zeros((256, 256), np.float32)]))
    assert fc["blocks_profiled"] == "8", fc
    assert float(ft["sectors_per_request"]) > float(fc["sectors_per_request"]), (fc, ft)
    a100 = copy.profile([X], [np.zeros((256, 256), np.float32)], "a100")  # a small text: NVRTC's occupancy for sm_80
    assert "on a100: A100" in a100, a100

    expect_error(lambda: k.profile([A, B4], [np.zeros((64, 4), np.float32)], "v100"), tclib.TC_ERROR_INVALID_ARGUMENT,
                 "no GPU named 'v100' to estimate for (known: h100, h200, a100)")
    cpu = p.compile("mm", [A, B], {"backend": "cpu"})
    expect_error(lambda: cpu.profile([A, B], [np.zeros((64, 64), np.float32)]), tclib.TC_ERROR_UNSUPPORTED,
                 "a profile is made for backend=cuda kernels compiled with cuda.emulate=1")
    expect_error(lambda: k.profile([A], [np.zeros((64, 4), np.float32)]), tclib.TC_ERROR_INVALID_ARGUMENT, "input")


CHECKS = {"no_cuda": no_cuda, "explicit_arch": explicit_arch, "kernel_code": kernel_code,
          "bad_options": bad_options, "strided_tensors": strided_tensors, "no_host_compiler": no_host_compiler,
          "registers": registers, "register_tiles": register_tiles, "shared_memory": shared_memory, "unroll": unroll,
          "lane_reductions": lane_reductions, "profile": profile,
          "contraction_route": contraction_route, "small_grids": small_grids, "row_route": row_route, "blas_route": blas_route,
          "blas_route_missing": blas_route_missing}
HIDDEN = {"TC_NVRTC": "/nonexistent/libnvrtc.so", "TC_CUDA_DRIVER": "/nonexistent/libcuda.so.1"}
ENVIRONMENTS = {"no_cuda": HIDDEN, "blas_route_missing": {"TC_CUBLAS": "/nonexistent/libcublas.so.13"}}


def child(name):
    try:
        CHECKS[name]()
    except Skip as s:
        print("SKIP %s: %s" % (name, s))
        return 0
    print("PASS %s" % name)
    return 0


def main(names):
    if len(names) == 2 and names[0] == "--child":
        return child(names[1])
    failed = 0
    for name in names or list(CHECKS):
        env = dict(os.environ, **ENVIRONMENTS.get(name, {}))
        scratch = tempfile.mkdtemp(prefix="tc-cuda-backend-test-")
        if name == "no_host_compiler":
            env.update(CXX="/nonexistent/c++", TMPDIR=scratch)
        r = subprocess.run([sys.executable, "-B", os.path.abspath(__file__), "--child", name], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        shutil.rmtree(scratch, ignore_errors=True)
        out = r.stdout.strip()
        if r.returncode != 0:
            failed += 1
            print("FAIL %s (exit %d):\n%s" % (name, r.returncode, out))
        else:
            print(out)
    print("%d passed, %d failed" % (len(names or CHECKS) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
