//! Matrix multiply with a Tensor Comprehension from Rust, checked against a loop; then a shape
//! error, reported as a `tc::Error` with libtc's status and message. Exits 0 on success.
use tc::{Options, Program, Status, TensorMut, TensorRef};

const SOURCE: &str = "def mm(float(M,K) A, float(K,N) B) -> (C) {\n  C(i,j) +=! A(i,k) * B(k,j)\n}\n";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (m, k, n) = (4, 3, 5);
    let a: Vec<f32> = (0..m * k).map(|x| (x % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..k * n).map(|x| (x % 5) as f32 * 0.5).collect();

    let program = Program::define_named(SOURCE, "mm.tc")?;
    let inputs = [TensorRef::new(&a, &[m, k])?, TensorRef::new(&b, &[k, n])?];
    let options = Options::new()?.with("backend", "reference")?;
    let kernel = program.compile("mm", &inputs, &options)?;
    let info = &kernel.outputs()?[0];
    println!("libtc {}: mm -> {} {:?}", tc::version(), info.dtype, info.shape);

    let mut c = vec![0.0f32; info.num_elements()];
    kernel.run(&inputs, &mut [TensorMut::new(&mut c, &info.dims())?])?;
    for i in 0..m {
        for j in 0..n {
            let want: f32 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            if (c[i * n + j] - want).abs() > 1e-5 {
                return Err(format!("C({}, {}) = {}, expected {}", i, j, c[i * n + j], want).into());
            }
        }
    }

    let wrong = [TensorRef::new(&a, &[m, k])?, TensorRef::new(&a, &[m, k])?];
    match program.compile("mm", &wrong, &options) {
        Err(e) if e.status() == Status::Shape => println!("as expected: {}", e),
        other => return Err(format!("expected a shape error, got {:?}", other.map(|_| ())).into()),
    }
    println!("rust example: ok");
    Ok(())
}
