//! The safe layer end to end against the built libtc: compile/run against plain loops,
//! strided views in and out, 0-d tensors, several outputs and dtypes, accumulation into
//! outputs, options through libtc, introspection, errors with status and message, Send/Sync
//! and sharing a kernel between threads, the gradient program of mm (signature, source, and
//! d_A, d_B against loops on both backends). Run by ctest as bindings.rust (`cargo test`).
use tc::{DataType, Error, Kernel, Options, Program, Status, TensorInfo, TensorMut, TensorRef, BF16, F16};

const MM: &str = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }";

/// Small integers as floats: every product sum below is exact, so results compare with ==.
fn pattern(n: usize, seed: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7 + seed * 13) % 9) as f32 - 4.0).collect()
}

/// Row-major M x N product of row-major A (M x K) and B (K x N).
fn matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
        }
    }
    c
}

fn compile(src: &str, entry: &str, inputs: &[TensorRef]) -> Kernel {
    Program::define(src).unwrap().compile(entry, inputs, &Options::new().unwrap()).unwrap()
}

#[test]
fn matmul_matches_a_loop() {
    let (m, k, n) = (3, 5, 4);
    let (a, b) = (pattern(m * k, 1), pattern(k * n, 2));
    let program = Program::define(MM).unwrap();
    let inputs = [TensorRef::new(&a, &[m, k]).unwrap(), TensorRef::new(&b, &[k, n]).unwrap()];
    let expected_info = TensorInfo { dtype: DataType::FLOAT32, shape: vec![3, 4] };
    assert_eq!(program.infer_outputs("mm", &inputs).unwrap(), vec![expected_info.clone()]);

    let options = Options::new().unwrap().with("backend", "reference").unwrap();
    let kernel = program.compile("mm", &inputs, &options).unwrap();
    assert_eq!(kernel.outputs().unwrap(), vec![expected_info]);
    let mut c = vec![f32::NAN; m * n];
    kernel.run(&inputs, &mut [TensorMut::new(&mut c, &[m, n]).unwrap()]).unwrap();
    assert_eq!(c, matmul(&a, &b, m, k, n));
}

#[test]
fn strided_views_in_and_out() {
    let (m, k, n) = (3, 4, 2);
    let (a, b) = (pattern(m * k, 3), pattern(k * n, 4));
    // A stored column-major (Fortran order): element (i, p) at i + p*m.
    let a_cols: Vec<f32> = (0..m * k).map(|x| a[(x % m) * k + x / m]).collect();
    // B as a sub-matrix of a larger 6x5 buffer, starting at row 1, column 2.
    let mut b_big = [99.0f32; 6 * 5];
    for p in 0..k {
        for j in 0..n {
            b_big[(1 + p) * 5 + 2 + j] = b[p * n + j];
        }
    }
    let inputs = [
        TensorRef::with_strides(&a_cols, &[m, k], &[1, m]).unwrap(),
        TensorRef::with_strides(&b_big[5 + 2..], &[k, n], &[5, 1]).unwrap(),
    ];
    let kernel = compile(MM, "mm", &inputs);
    // C into every other column of a 3x5 buffer: strides (5, 2), from column 1.
    let mut c_big = vec![-1.0f32; m * 5];
    kernel.run(&inputs, &mut [TensorMut::with_strides(&mut c_big[1..], &[m, n], &[5, 2]).unwrap()]).unwrap();
    let c = matmul(&a, &b, m, k, n);
    for i in 0..m {
        for col in 0..5 {
            let want = if col % 2 == 1 { c[i * n + col / 2] } else { -1.0 };
            assert_eq!(c_big[i * 5 + col], want, "C buffer at ({}, {})", i, col);
        }
    }
}

#[test]
fn scalars_and_several_outputs() {
    let src = "def s(float(N) A, float k) -> (B, total) {\n  B(i) = A(i) * k\n  total +=! A(i)\n}";
    let a = pattern(6, 5);
    let k = 3.0f32;
    let inputs = [TensorRef::new(&a, &[6]).unwrap(), TensorRef::scalar(&k)];
    let kernel = compile(src, "s", &inputs);
    let infos = kernel.outputs().unwrap();
    assert_eq!(infos[1], TensorInfo { dtype: DataType::FLOAT32, shape: vec![] });
    assert_eq!(infos[1].num_elements(), 1);
    let (mut b, mut total) = (vec![0.0f32; 6], 0.0f32);
    kernel.run(&inputs, &mut [TensorMut::new(&mut b, &[6]).unwrap(), TensorMut::scalar(&mut total)]).unwrap();
    assert_eq!(b, a.iter().map(|x| x * 3.0).collect::<Vec<_>>());
    assert_eq!(total, a.iter().sum::<f32>());
}

#[test]
fn accumulation_reads_the_output() {
    let a = [1.0f32, 2.0, 3.0];
    let inputs = [TensorRef::new(&a, &[3]).unwrap()];
    let kernel = compile("def acc(float(N) A) -> (B) { B(i) += A(i) }", "acc", &inputs);
    let mut b = [10.0f32, 20.0, 30.0];
    for _ in 0..2 {
        kernel.run(&inputs, &mut [TensorMut::new(&mut b, &[3]).unwrap()]).unwrap();
    }
    assert_eq!(b, [12.0, 24.0, 36.0]);
}

#[test]
fn dtypes() {
    let src = "def f(int32(N) A, uint8(N) B, half(N) H, double(N) D) -> (gt, inc, twice, neg) {\n\
               gt(i) = A(i) > int32(B(i))\n  inc(i) = B(i) + 1\n  twice(i) = H(i) * 2\n  neg(i) = -D(i)\n}";
    let a = [-1i32, 5, 300, 7];
    let b = [0u8, 5, 255, 6];
    let h = [F16(0x3C00), F16(0xBE00), F16(0x0000), F16(0x6400)]; // 1, -1.5, 0, 1024
    let d = [0.5f64, -2.0, 1e300, 0.0];
    let inputs = [
        TensorRef::new(&a, &[4]).unwrap(),
        TensorRef::new(&b, &[4]).unwrap(),
        TensorRef::new(&h, &[4]).unwrap(),
        TensorRef::new(&d, &[4]).unwrap(),
    ];
    assert_eq!(inputs[2].dtype(), DataType::FLOAT16);
    let kernel = compile(src, "f", &inputs);
    let dtypes: Vec<_> = kernel.outputs().unwrap().iter().map(|i| i.dtype.to_string()).collect();
    assert_eq!(dtypes, ["bool", "uint8", "float16", "float64"]);
    let (mut gt, mut inc, mut twice, mut neg) = ([true; 4], [0u8; 4], [F16(0); 4], [0f64; 4]);
    kernel
        .run(
            &inputs,
            &mut [
                TensorMut::new(&mut gt, &[4]).unwrap(),
                TensorMut::new(&mut inc, &[4]).unwrap(),
                TensorMut::new(&mut twice, &[4]).unwrap(),
                TensorMut::new(&mut neg, &[4]).unwrap(),
            ],
        )
        .unwrap();
    assert_eq!(gt, [false, false, true, true]);
    assert_eq!(inc, [1, 6, 0, 7]); // uint8 wraps
    assert_eq!(twice, [F16(0x4000), F16(0xC200), F16(0x0000), F16(0x6800)]); // 2, -3, 0, 2048
    assert_eq!(neg, [-0.5, 2.0, -1e300, -0.0]);
}

#[test]
fn bfloat16() {
    let src = "def f(bf16(N) X) -> (Y, Z) {\n  Y(i) = X(i) * 3\n  Z(i) = float(X(i))\n}";
    let x = [BF16(0x3F80), BF16(0xC040), BF16(0x3F81), BF16(0x7FC0)]; // 1, -3, 1 + 2^-7, NaN
    let inputs = [TensorRef::new(&x, &[4]).unwrap()];
    assert_eq!(inputs[0].dtype(), DataType::BFLOAT16);
    let kernel = compile(src, "f", &inputs);
    let dtypes: Vec<_> = kernel.outputs().unwrap().iter().map(|i| i.dtype.to_string()).collect();
    assert_eq!(dtypes, ["bfloat16", "float32"]);
    let (mut y, mut z) = ([BF16(0); 4], [0f32; 4]);
    kernel
        .run(&inputs, &mut [TensorMut::new(&mut y, &[4]).unwrap(), TensorMut::new(&mut z, &[4]).unwrap()])
        .unwrap();
    // 3 * (1 + 2^-7) = 3 + 3 * 2^-7 rounds to 3 + 2^-5 (ties to even); NaN stays 0x7fc0
    assert_eq!(y, [BF16(0x4040), BF16(0xC110), BF16(0x4042), BF16(0x7FC0)]);
    assert_eq!(&z[..3], &[1.0, -3.0, 1.0 + 1.0 / 128.0]);
    assert!(z[3].is_nan());
}

#[test]
fn options_go_through_libtc() {
    let default_backend = Options::new().unwrap().get("backend").unwrap();
    assert!(!default_backend.is_empty()); // whatever this libtc's default is
    let mut options = Options::new().unwrap();
    options.set("backend", "reference").unwrap();
    options.set("checked", "0").unwrap();
    assert_eq!(options.get("backend").unwrap(), "reference");
    assert_eq!(options.get("checked").unwrap(), "0");

    let err = options.set("backend", "no-such-backend").unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("option 'backend' cannot be 'no-such-backend'"), "{}", err);
    assert_eq!(options.get("backend").unwrap(), "reference"); // unchanged
    assert_eq!(options.set("no_such_key", "1").unwrap_err().status(), Status::InvalidArgument);
    assert_eq!(options.get("no_such_key").unwrap_err().status(), Status::InvalidArgument);
}

#[test]
fn introspection() {
    let src = format!("{}\ndef twice(int64(N) X) -> (Y) {{ Y(i) = X(i) * 2 }}", MM);
    let program = Program::define_named(&src, "two.tc").unwrap();
    assert_eq!(program.def_names().unwrap(), ["mm", "twice"]);
    let inputs = program.inputs("mm").unwrap();
    assert_eq!(inputs[1].name, "B");
    assert_eq!(inputs[1].dims, ["K", "N"]);
    let outputs = program.outputs("twice").unwrap();
    assert_eq!((outputs[0].name.as_str(), outputs[0].dtype), ("Y", DataType::INT64));
    assert!(program.describe("mm").unwrap().contains("output C: float32(M, N)"));
    assert!(tc::version().starts_with("0."));
}

#[test]
fn errors_carry_status_and_message() {
    let syntax = Program::define_named("def f(float(N) A) -> (B) {\n  B(i) = A(i) +\n}", "f.tc").unwrap_err();
    assert_eq!(syntax.status(), Status::Syntax);
    assert_eq!(syntax.status().code(), -2);
    assert!(syntax.message().starts_with("f.tc:3:1: error: expected an expression"), "{}", syntax);
    assert!(syntax.to_string().starts_with("syntax error: f.tc:3:1"), "{}", syntax);
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(syntax.clone());
    assert_eq!(boxed.to_string(), syntax.to_string());

    let semantic = Program::define("def e(float(N) A) -> (B) { B(i) = C(i) }").unwrap_err();
    assert_eq!(semantic.status(), Status::Semantic);

    let program = Program::define(MM).unwrap();
    let (a, b_bad) = ([0f32; 6], [0f32; 8]);
    let bad = [TensorRef::new(&a, &[2, 3]).unwrap(), TensorRef::new(&b_bad, &[4, 2]).unwrap()];
    let shape = program.compile("mm", &bad, &Options::new().unwrap()).unwrap_err();
    assert_eq!(shape.status(), Status::Shape);
    assert!(shape.message().contains("size 'K' is 3"), "{}", shape);
    assert_eq!(program.infer_outputs("mm", &bad).unwrap_err().status(), Status::Shape);

    let unknown = program.compile("nope", &bad, &Options::new().unwrap()).unwrap_err();
    assert_eq!(unknown.status(), Status::InvalidArgument);
    assert!(unknown.message().contains("no def named 'nope'"));
}

#[test]
fn run_checks_tensors() {
    let program = Program::define(MM).unwrap();
    let (a, b) = ([1f32; 6], [1f32; 6]);
    let inputs = [TensorRef::new(&a, &[2, 3]).unwrap(), TensorRef::new(&b, &[3, 2]).unwrap()];
    let kernel = program.compile("mm", &inputs, &Options::new().unwrap()).unwrap();
    let mut c = [0f32; 4];
    let wrong_count = kernel.run(&inputs[..1], &mut [TensorMut::new(&mut c, &[2, 2]).unwrap()]).unwrap_err();
    assert_eq!(wrong_count.status(), Status::InvalidArgument);
    assert!(wrong_count.message().contains("takes 2 inputs, got 1"), "{}", wrong_count);
    let wrong_shape = kernel.run(&inputs, &mut [TensorMut::new(&mut c, &[4, 1]).unwrap()]).unwrap_err();
    assert_eq!(wrong_shape.status(), Status::Shape);
    let mut c64 = [0f64; 4];
    let wrong_dtype = kernel.run(&inputs, &mut [TensorMut::new(&mut c64, &[2, 2]).unwrap()]).unwrap_err();
    assert_eq!(wrong_dtype.status(), Status::Shape);
    assert!(wrong_dtype.message().contains("float32"), "{}", wrong_dtype);
    // An output whose elements overlap (stride 0) is rejected by libtc.
    let mut one = [0f32; 2];
    let overlap =
        kernel.run(&inputs, &mut [TensorMut::with_strides(&mut one, &[2, 2], &[1, 0]).unwrap()]).unwrap_err();
    assert_eq!(overlap.status(), Status::Shape);
    assert_eq!(c, [0.0; 4]);
}

#[test]
fn views_must_fit_their_slice() {
    let data = [0f32; 6];
    let e = TensorRef::new(&data, &[2, 4]).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(e.message().contains("8 elements, but the slice has 6"), "{}", e);
    let e = TensorRef::with_strides(&data, &[2, 3], &[4, 1]).unwrap_err();
    assert!(e.message().contains("reaches element 6"), "{}", e);
    assert!(TensorRef::with_strides(&data, &[2, 3], &[3, 1]).is_ok());
    assert!(TensorRef::with_strides(&data, &[3, 0], &[100, 100]).is_ok()); // no elements
    assert!(TensorRef::with_strides(&data, &[2], &[1, 1]).is_err());
    assert!(TensorRef::with_strides(&data, &[usize::MAX, 2], &[usize::MAX, 1]).is_err());
    assert_eq!(Program::define("def f\0").unwrap_err().status(), Status::InvalidArgument);
}

#[test]
fn one_kernel_many_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Program>();
    assert_send_sync::<Kernel>();
    assert_send_sync::<Options>();
    assert_send_sync::<Error>();
    assert_send_sync::<TensorRef>();

    let (m, k, n) = (8, 16, 8);
    let b = pattern(k * n, 9);
    let a: Vec<Vec<f32>> = (0..4).map(|t| pattern(m * k, 10 + t)).collect();
    let kernel = {
        let shape_only = [TensorRef::new(&a[0], &[m, k]).unwrap(), TensorRef::new(&b, &[k, n]).unwrap()];
        let program = Program::define(MM).unwrap();
        program.compile("mm", &shape_only, &Options::new().unwrap()).unwrap()
    }; // the program is dropped: the kernel does not need it
    std::thread::scope(|s| {
        for a in &a {
            let (kernel, b) = (&kernel, &b);
            s.spawn(move || {
                let inputs = [TensorRef::new(a, &[m, k]).unwrap(), TensorRef::new(b, &[k, n]).unwrap()];
                for _ in 0..20 {
                    let mut c = vec![0f32; m * n];
                    kernel.run(&inputs, &mut [TensorMut::new(&mut c, &[m, n]).unwrap()]).unwrap();
                    assert_eq!(c, matmul(a, b, m, k, n));
                }
            });
        }
    });
}

/// Row-major transpose of an r x c matrix.
fn transpose(a: &[f32], r: usize, c: usize) -> Vec<f32> {
    (0..r * c).map(|x| a[(x % r) * c + x / r]).collect()
}

#[test]
fn gradient_of_mm() {
    let program = Program::define(MM).unwrap();
    let grad = program.gradient(Some("mm")).unwrap();
    drop(program); // the gradient program does not need it
    assert_eq!(grad.def_names().unwrap(), ["mm_grad"]);
    assert!(grad.source().unwrap().contains("def mm_grad"), "{}", grad.source().unwrap());
    let inputs = grad.inputs("mm_grad").unwrap();
    let described: Vec<_> = inputs.iter().map(|p| (p.name.as_str(), p.dtype, p.dims.join(","))).collect();
    assert_eq!(
        described,
        [
            ("A", DataType::FLOAT32, "M,K".to_string()),
            ("B", DataType::FLOAT32, "K,N".to_string()),
            ("d_C", DataType::FLOAT32, "M,N".to_string())
        ]
    );
    let outputs = grad.outputs("mm_grad").unwrap();
    let described: Vec<_> = outputs.iter().map(|p| (p.name.as_str(), p.dtype)).collect();
    assert_eq!(described, [("d_A", DataType::FLOAT32), ("d_B", DataType::FLOAT32)]);

    // Small integers: every product sum is exact, so the gradients compare with ==.
    let (m, k, n) = (3, 4, 2);
    let (a, b, dc) = (pattern(m * k, 1), pattern(k * n, 2), pattern(m * n, 3));
    let inputs = [
        TensorRef::new(&a, &[m, k]).unwrap(),
        TensorRef::new(&b, &[k, n]).unwrap(),
        TensorRef::new(&dc, &[m, n]).unwrap(),
    ];
    for backend in ["reference", "cpu"] {
        let options = Options::new().unwrap().with("backend", backend).unwrap();
        let kernel = grad.compile("mm_grad", &inputs, &options).unwrap();
        let shapes: Vec<_> = kernel.outputs().unwrap().into_iter().map(|i| i.shape).collect();
        assert_eq!(shapes, [vec![3, 4], vec![4, 2]]);
        let (mut da, mut db) = (vec![f32::NAN; m * k], vec![f32::NAN; k * n]);
        kernel
            .run(
                &inputs,
                &mut [TensorMut::new(&mut da, &[m, k]).unwrap(), TensorMut::new(&mut db, &[k, n]).unwrap()],
            )
            .unwrap();
        assert_eq!(da, matmul(&dc, &transpose(&b, k, n), m, n, k), "d_A = d_C B^T ({})", backend);
        assert_eq!(db, matmul(&transpose(&a, m, k), &dc, k, m, n), "d_B = A^T d_C ({})", backend);
    }
    // The only def when entry is None.
    assert_eq!(
        Program::define(MM).unwrap().gradient(None).unwrap().source().unwrap(),
        grad.source().unwrap()
    );
}

#[test]
fn gradient_errors() {
    let product =
        Program::define_named("def prod(float(N,K) A) -> (P) {\n  P(i) *=! A(i,k)\n}", "prod.tc").unwrap();
    let e = product.gradient(None).unwrap_err();
    assert_eq!(e.status(), Status::Unsupported);
    assert!(e.message().contains("prod.tc:2:"), "{}", e);
    let integers = Program::define("def twice(int32(N) X) -> (Y) { Y(i) = X(i) * 2 }").unwrap();
    assert_eq!(integers.gradient(None).unwrap_err().status(), Status::Unsupported);
    let unknown = Program::define(MM).unwrap().gradient(Some("nope")).unwrap_err();
    assert_eq!(unknown.status(), Status::InvalidArgument);
    assert_eq!(
        Program::define(MM).unwrap().gradient(Some("m\0m")).unwrap_err().status(),
        Status::InvalidArgument
    );
}
