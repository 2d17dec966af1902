//! The autotuner and the compilation cache through the safe layer: Program::tune with a
//! progress closure (sane numbers, stopping early, a panic that is resumed, none at all),
//! Kernel::cache_hit on later compiles, cache_export / cache_import into an empty cache, the
//! cache error for an unsafe directory, and cache_push / cache_pull / Kernel::cache_tier with a
//! real redis-server (started on a free loopback port, killed at the end). Every test uses its own cache directory under
//! std::env::temp_dir() (option cache=DIR), so the user's cache is never read or written.
//! Run by ctest as bindings.rust (`cargo test`).
use std::fs;
use std::ops::ControlFlow;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use tc::{
    cache_export, cache_import, cache_pull, cache_push, CacheTier, Kernel, Options, Program, Status,
    TensorMut, TensorRef, TuneProgress,
};

const MM: &str = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }";
// Large enough that vectorised, tiled code is clearly faster than the scalar starting point
// below (the tuner stores only a candidate that beats the start), small enough that every
// candidate runs in well under a millisecond.
const M: usize = 48;
const K: usize = 32;
const N: usize = 40;

/// Candidates are timed: one tuning test at a time, so that two searches do not measure each
/// other. Poisoning is ignored (a failed test must not fail the others).
static TUNING: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    TUNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// A fresh directory under the system's temporary directory, mode 0700 (libtc refuses cache
/// directories that group or others can write), removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let name = format!(
            "tc-rust-{}-{}-{}-{}",
            tag,
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst),
            nanos
        );
        let path = std::env::temp_dir().join(name);
        // create, not create_all: fails if the name exists, so the directory is ours alone.
        fs::DirBuilder::new().mode(0o700).create(&path).unwrap();
        TempDir(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    fn as_option(&self) -> String {
        self.0.to_str().expect("temporary directory path is UTF-8").to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Small integers as floats: every product and sum is exact in any summation order, so every
/// schedule the tuner tries gives the same bits and results compare with ==.
fn pattern(n: usize, seed: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7 + seed * 13) % 9) as f32 - 4.0).collect()
}

/// Row-major M x N product of row-major A (M x K) and B (K x N).
fn matmul(a: &[f32], b: &[f32]) -> Vec<f32> {
    let mut c = vec![0.0; M * N];
    for i in 0..M {
        for j in 0..N {
            c[i * N + j] = (0..K).map(|p| a[i * K + p] * b[p * N + j]).sum();
        }
    }
    c
}

struct Case {
    program: Program,
    a: Vec<f32>,
    b: Vec<f32>,
}

impl Case {
    fn new() -> Case {
        Case { program: Program::define(MM).unwrap(), a: pattern(M * K, 1), b: pattern(K * N, 2) }
    }

    fn inputs(&self) -> [TensorRef<'_>; 2] {
        [TensorRef::new(&self.a, &[M, K]).unwrap(), TensorRef::new(&self.b, &[K, N]).unwrap()]
    }

    fn run(&self, kernel: &Kernel) -> Vec<f32> {
        let mut c = vec![f32::NAN; M * N];
        kernel.run(&self.inputs(), &mut [TensorMut::new(&mut c, &[M, N]).unwrap()]).unwrap();
        c
    }

    /// A plain compile (no knobs set) against `cache` ("off" or a directory).
    fn compile(&self, cache: &str) -> Kernel {
        let options = Options::new().unwrap().with("cache", cache).unwrap();
        self.program.compile("mm", &self.inputs(), &options).unwrap()
    }

    fn tune(&self, options: &Options, progress: Option<&mut tc::TuneCallback<'_>>) -> tc::Result<Kernel> {
        self.program.tune("mm", &self.inputs(), options, progress)
    }
}

/// A deliberately bad starting point (scalar code, 1x1 tiles, one thread), so the search has
/// something to beat, and a search of two generations of four candidates, so it takes seconds.
/// The budget only caps the search; it is generous so that a loaded machine still finishes
/// both generations.
fn bad_start(cache: &str) -> Options {
    let mut options = Options::new().unwrap();
    for (key, value) in [
        ("cpu.vectorize", "1"),
        ("cpu.tile", "1x1"),
        ("cpu.unroll", "1"),
        ("threads", "1"),
        ("tune.population", "4"),
        ("tune.generations", "2"),
        ("tune.budget", "30"),
        ("cache", cache),
    ] {
        options.set(key, value).unwrap();
    }
    options
}

#[test]
fn tune_reports_progress_and_a_later_compile_hits_the_cache() {
    let _serial = one_at_a_time();
    let case = Case::new();
    let dir = TempDir::new("tune");
    let mut calls: Vec<TuneProgress> = Vec::new();
    let tuned = case
        .tune(
            &bad_start(&dir.as_option()),
            Some(&mut |p: &TuneProgress| {
                calls.push(*p);
                ControlFlow::Continue(())
            }),
        )
        .unwrap();

    assert!(!calls.is_empty(), "the progress closure was never called");
    for (i, p) in calls.iter().enumerate() {
        assert_eq!(p.generations, 2, "{:?}", p);
        assert!(p.generation >= 1 && p.generation <= p.generations, "{:?}", p);
        // One call per measured candidate, the starting point first; once more at the end, the
        // count unchanged, where the final comparison gives the result back to the start (its
        // best is then the default's).
        let again = i > 0 && i + 1 == calls.len() && p.candidates_done == calls[i - 1].candidates_done;
        assert!(!again || p.best_ms == p.default_ms, "{:?}", p);
        assert_eq!(p.candidates_done, i as i64 + if again { 0 } else { 1 }, "{:?}", p);
        assert!(p.candidates_done <= p.candidates_planned, "{:?}", p);
        assert!(p.best_ms > 0.0 && p.best_ms.is_finite(), "{:?}", p);
        assert!(p.default_ms > 0.0 && p.default_ms.is_finite(), "{:?}", p);
        assert!(p.best_ms <= p.default_ms, "the best so far is never worse than the start: {:?}", p);
        assert_eq!(p.budget_s, 30.0, "{:?}", p);
        assert!(p.elapsed_s >= 0.0, "{:?}", p);
        assert!(!p.to_string().is_empty());
    }
    for (i, w) in calls.windows(2).enumerate() {
        assert!(w[1].generation >= w[0].generation, "{:?}", w);
        // The repeated last report of a refuted winner gives the start's time again: it may be
        // above the search's best.
        let refuted = i + 2 == calls.len() && w[1].candidates_done == w[0].candidates_done;
        assert!(refuted || w[1].best_ms <= w[0].best_ms, "the best so far only improves: {:?}", w);
    }

    let want = matmul(&case.a, &case.b);
    let plain = case.compile("off");
    assert!(!plain.cache_hit().unwrap(), "{}", plain.describe().unwrap());
    assert_eq!(case.run(&plain), want);
    assert_eq!(case.run(&tuned), want);
    assert!(tuned.describe().unwrap().contains("tuned now:"), "{}", tuned.describe().unwrap());

    // A later compile without explicit knobs finds the winner in the same cache.
    let cached = case.compile(&dir.as_option());
    assert!(cached.cache_hit().unwrap(), "{}", cached.describe().unwrap());
    assert_eq!(case.run(&cached), want);
    // tc_kernel_code lowers again: a kernel linked from the cache has its loop nest too.
    assert!(cached.code().unwrap().contains("produce "));
}

#[test]
fn break_from_the_closure_stops_after_one_call() {
    let _serial = one_at_a_time();
    let case = Case::new();
    let dir = TempDir::new("stop");
    let mut calls = 0;
    let kernel = case
        .tune(
            &bad_start(&dir.as_option()),
            Some(&mut |p: &TuneProgress| {
                calls += 1;
                assert_eq!(p.candidates_done, 1); // the starting point
                ControlFlow::Break(())
            }),
        )
        .unwrap();
    assert_eq!(calls, 1);
    // Stopped after the starting point: it is what comes back, and it was stored before the
    // search began, so a later compile finds it.
    assert_eq!(case.run(&kernel), matmul(&case.a, &case.b));
    let later = case.compile(&dir.as_option());
    assert!(later.cache_hit().unwrap(), "{}", later.describe().unwrap());
}

#[test]
fn a_panic_in_the_closure_stops_the_search_and_is_resumed() {
    let _serial = one_at_a_time();
    let case = Case::new();
    let options = bad_start("off");
    let calls = AtomicUsize::new(0);
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        case.tune(
            &options,
            Some(&mut |_: &TuneProgress| -> ControlFlow<()> {
                calls.fetch_add(1, Ordering::SeqCst);
                panic!("stop here")
            }),
        )
    }));
    let payload = caught.expect_err("the closure's panic is resumed by tune");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"stop here"));
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the search stopped at the panic");

    // libtc is left in a usable state: the same search runs again, to the end, without a closure.
    let kernel = case.tune(&options, None).unwrap();
    assert_eq!(case.run(&kernel), matmul(&case.a, &case.b));
}

#[test]
fn without_a_closure_and_with_bad_arguments() {
    let _serial = one_at_a_time();
    let case = Case::new();
    let mut options = bad_start("off");
    options.set("tune.population", "2").unwrap();
    options.set("tune.generations", "1").unwrap();
    let kernel = case.tune(&options, None).unwrap();
    assert_eq!(case.run(&kernel), matmul(&case.a, &case.b));
    assert!(!kernel.cache_hit().unwrap());

    let err = case.program.tune("nope", &case.inputs(), &options, None).unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument, "{}", err);
    assert!(err.message().contains("nope"), "{}", err);
    let err = Options::new().unwrap().with("tune.population", "0").unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument, "{}", err);
    // The wrong inputs: the shape error, as compile reports it.
    let short = [TensorRef::new(&case.a, &[M, K]).unwrap(), TensorRef::new(&case.a, &[M, K]).unwrap()];
    let err = case.program.tune("mm", &short, &options, None).unwrap_err();
    assert_eq!(err.status(), Status::Shape, "{}", err);
}

#[test]
fn export_then_import_into_an_empty_cache_hits_there() {
    let _serial = one_at_a_time();
    let case = Case::new();
    let (first, other, files) = (TempDir::new("first"), TempDir::new("other"), TempDir::new("files"));
    case.tune(&bad_start(&first.as_option()), None).unwrap();
    let tuned_here = case.compile(&first.as_option());
    assert!(tuned_here.cache_hit().unwrap(), "{}", tuned_here.describe().unwrap());
    let before = case.compile(&other.as_option());
    assert!(!before.cache_hit().unwrap(), "{}", before.describe().unwrap());

    let exported = files.join("tuned.tccache");
    cache_export(Some(first.path()), &exported).unwrap();
    assert!(exported.is_file());
    cache_import(Some(other.path()), &exported).unwrap();
    let after = case.compile(&other.as_option());
    assert!(after.cache_hit().unwrap(), "{}", after.describe().unwrap());
    assert_eq!(case.run(&after), matmul(&case.a, &case.b));

    // A file that is not an export, or none at all: the cache error, naming the file.
    let junk = files.join("junk.tccache");
    fs::write(&junk, b"this is not a libtc cache export\n".repeat(10)).unwrap();
    let err = cache_import(Some(other.path()), &junk).unwrap_err();
    assert_eq!(err.status(), Status::Cache, "{}", err);
    assert!(err.message().contains("junk.tccache"), "{}", err);
    let err = cache_import(Some(other.path()), files.join("missing.tccache")).unwrap_err();
    assert_eq!(err.status(), Status::Cache, "{}", err);
    // The import that failed changed nothing: the good record is still there.
    assert!(case.compile(&other.as_option()).cache_hit().unwrap());
}

#[test]
fn a_group_writable_cache_directory_is_the_cache_error() {
    let _serial = one_at_a_time();
    let case = Case::new();
    let dir = TempDir::new("open");
    // set_permissions, not the creation mode: the umask would clear the group bit.
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o770)).unwrap();
    let mut calls = 0;
    let err = case
        .tune(
            &bad_start(&dir.as_option()),
            Some(&mut |_: &TuneProgress| {
                calls += 1;
                ControlFlow::Continue(())
            }),
        )
        .unwrap_err();
    assert_eq!(err.status(), Status::Cache, "{}", err);
    assert!(err.message().contains("writable by group or others"), "{}", err);
    assert!(err.message().contains(&dir.as_option()), "{}", err);
    assert_eq!(calls, 0, "the cache is checked before any tuning");
    // Import, the other call that writes a cache, refuses it too; tc_compile only ignores it.
    let err = cache_import(Some(dir.path()), dir.join("whatever.tccache")).unwrap_err();
    assert_eq!(err.status(), Status::Cache, "{}", err);
    assert!(!case.compile(&dir.as_option()).cache_hit().unwrap());
}

#[test]
fn progress_displays_as_one_line() {
    let p = TuneProgress {
        generation: 1,
        generations: 2,
        candidates_done: 3,
        candidates_planned: 8,
        best_ms: 0.25,
        default_ms: 1.0,
        elapsed_s: 1.5,
        budget_s: 30.0,
    };
    assert_eq!(p.speedup(), Some(4.0));
    let line = p.to_string();
    assert_eq!(line, "generation 1/2, candidates 3/8, best 0.250 ms (4.00x), default 1.000 ms, 1.5/30 s");
    let unmeasured = TuneProgress { best_ms: f64::INFINITY, ..p };
    assert_eq!(unmeasured.speedup(), None);
    assert!(unmeasured.to_string().contains("best -,"), "{}", unmeasured);
}

#[test]
fn the_progress_struct_has_the_c_layout() {
    // tc.h: uint32 size; int32 generation, generations; int64 candidates_*; four doubles.
    assert_eq!(std::mem::size_of::<tc::sys::tc_tune_progress>(), 64);
    assert_eq!(std::mem::align_of::<tc::sys::tc_tune_progress>(), 8);
    // and the structs the library fills, each starting with its size (set by empty())
    assert_eq!(std::mem::size_of::<tc::sys::tc_tensor_info>(), 144);
    assert_eq!(std::mem::size_of::<tc::sys::tc_param_info>(), 152);
    assert_eq!(tc::sys::tc_tensor_info::empty().size, 144);
    assert_eq!(tc::sys::tc_param_info::empty().size, 152);
}

/// Debian's redis-server on a free loopback port with a directory of its own, killed on drop.
struct Redis {
    child: std::process::Child,
    url: String,
}

impl Redis {
    fn start(dir: &TempDir) -> Redis {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .arg("--logfile")
            .arg(dir.join("redis.log"))
            .spawn()
            .expect("redis-server (Debian's, tools/install-deps.sh installs it)");
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        Redis { child, url: format!("redis://127.0.0.1:{}", port) }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn push_pull_and_the_tier_that_served() {
    let _serial = one_at_a_time();
    let case = Case::new();
    let (server_dir, first, other) = (TempDir::new("redis"), TempDir::new("first"), TempDir::new("other"));
    let redis = Redis::start(&server_dir);
    let key = server_dir.join("key");
    fs::write(&key, b"a secret of at least sixteen bytes\n").unwrap();
    fs::set_permissions(&key, fs::Permissions::from_mode(0o600)).unwrap();
    let remote_with = |cache: &str| {
        Options::new()
            .unwrap()
            .with("cache", cache)
            .unwrap()
            .with("cache.remote", &redis.url)
            .unwrap()
            .with("cache.remote_key", key.to_str().unwrap())
            .unwrap()
            .with("cache.remote_timeout", "5000") // a loaded machine's stall is not a miss
            .unwrap()
    };
    let remote = remote_with("auto");

    case.tune(&bad_start(&first.as_option()), None).unwrap();
    assert_eq!(cache_push(Some(first.path()), &remote).unwrap(), 2); // the kernel and the shared code
    let hit = case.program.compile("mm", &case.inputs(), &remote_with(&other.as_option())).unwrap();
    assert_eq!(hit.cache_tier().unwrap(), Some(CacheTier::Remote), "{}", hit.describe().unwrap());
    assert!(hit.cache_hit().unwrap());
    assert_eq!(case.run(&hit), matmul(&case.a, &case.b));
    assert_eq!(case.compile(&other.as_option()).cache_tier().unwrap(), Some(CacheTier::Local));
    assert_eq!(case.compile("off").cache_tier().unwrap(), None);
    let pulled = TempDir::new("pulled");
    assert_eq!(cache_pull(Some(pulled.path()), &remote).unwrap(), 2);
    assert_eq!(case.compile(&pulled.as_option()).cache_tier().unwrap(), Some(CacheTier::Local));

    // No remote named; a key file others can read.
    let err = cache_push(Some(first.path()), &Options::new().unwrap()).unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument, "{}", err);
    fs::set_permissions(&key, fs::Permissions::from_mode(0o644)).unwrap();
    let err = cache_pull(Some(pulled.path()), &remote).unwrap_err();
    assert_eq!(err.status(), Status::Cache, "{}", err);
    assert!(err.message().contains("can be read or written by group or others"), "{}", err);
}
