//! The autotuner and the compilation cache (`tc_tune`, `tc_kernel_cache_hit`,
//! `tc_cache_export`, `tc_cache_import`; docs/guide/tuning-and-cache.md).
//!
//! The progress closure is called by libtc from inside `tc_tune`, through a C function pointer
//! ([`trampoline`]). A Rust panic must never unwind through libtc's C++ frames (that is
//! undefined behaviour), so the trampoline catches it, tells libtc to stop, and
//! [`Program::tune`] resumes the panic once `tc_tune` has returned.
use std::any::Any;
use std::fmt;
use std::ops::ControlFlow;
use std::os::raw::{c_int, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::ptr::{self, NonNull};

use crate::error::check;
use crate::{owned, sys, Error, Kernel, Options, Program, Result, Status, TensorRef};

/// Where a [`Program::tune`] search stands (`tc_tune_progress`), given to the progress
/// closure after every measured candidate.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TuneProgress {
    /// The current generation, from 1.
    pub generation: i32,
    /// The planned number of generations (option `tune.generations`, a cap); lowered to the
    /// current generation when `tune.patience` ends the search early.
    pub generations: i32,
    /// Candidates measured so far, the starting point included (it is the first).
    pub candidates_done: i64,
    /// Candidates planned so far (grows as each generation is drawn; points already measured
    /// are not counted again).
    pub candidates_planned: i64,
    /// Median time in milliseconds of the best candidate so far.
    pub best_ms: f64,
    /// Median time in milliseconds of the starting point: the knob values the options set,
    /// or the backend's defaults for the knobs they leave unset.
    pub default_ms: f64,
    /// Seconds since the search started.
    pub elapsed_s: f64,
    /// The search's budget in seconds (option `tune.budget`).
    pub budget_s: f64,
}

impl TuneProgress {
    /// The C struct as this type.
    pub fn from_raw(raw: &sys::tc_tune_progress) -> TuneProgress {
        TuneProgress {
            generation: raw.generation,
            generations: raw.generations,
            candidates_done: raw.candidates_done,
            candidates_planned: raw.candidates_planned,
            best_ms: raw.best_ms,
            default_ms: raw.default_ms,
            elapsed_s: raw.elapsed_s,
            budget_s: raw.budget_s,
        }
    }

    /// How many times faster the best so far is than the starting point (`default_ms /
    /// best_ms`); `None` while either time is not a positive finite number.
    pub fn speedup(&self) -> Option<f64> {
        let usable = |t: f64| t.is_finite() && t > 0.0;
        if usable(self.best_ms) && usable(self.default_ms) {
            Some(self.default_ms / self.best_ms)
        } else {
            None
        }
    }
}

/// One progress line, as the Python binding and `tc tune` print it: `generation 1/2,
/// candidates 3/8, best 0.12 ms (4.1x), default 0.5 ms, 1.2/30 s`.
impl fmt::Display for TuneProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |t: f64| if t.is_finite() && t > 0.0 { format!("{:.3} ms", t) } else { "-".to_string() };
        write!(
            f,
            "generation {}/{}, candidates {}/{}, best {}",
            self.generation,
            self.generations,
            self.candidates_done,
            self.candidates_planned,
            ms(self.best_ms)
        )?;
        if let Some(s) = self.speedup() {
            write!(f, " ({:.2}x)", s)?;
        }
        write!(f, ", default {}, {:.1}/{:.0} s", ms(self.default_ms), self.elapsed_s, self.budget_s)
    }
}

/// The progress closure of a [`Program::tune`] call.
pub type TuneCallback<'a> = dyn FnMut(&TuneProgress) -> ControlFlow<()> + Send + 'a;

/// What `tc_tune`'s `user` pointer points at during one call: the closure and, once it has
/// panicked, the panic's payload.
struct TuneState<'a, 'b> {
    progress: &'a mut TuneCallback<'b>,
    panic: Option<Box<dyn Any + Send + 'static>>,
}

/// The `tc_tune_callback` handed to libtc: calls the closure with the progress; non-zero
/// (stop) when it returns `ControlFlow::Break` or panics. Never unwinds.
unsafe extern "C" fn trampoline(progress: *const sys::tc_tune_progress, user: *mut c_void) -> c_int {
    if progress.is_null() || user.is_null() {
        return 1;
    }
    // SAFETY: `user` is the `TuneState` that `Program::tune` passed to tc_tune; it lives on
    // that call's stack until tc_tune returns, and libtc calls back one candidate at a time,
    // never concurrently, so this is the only reference to it while the closure runs.
    let state = &mut *(user as *mut TuneState);
    if state.panic.is_some() {
        return 1; // libtc stops at the first non-zero; this only guards against a second call
    }
    // SAFETY: libtc passes a valid tc_tune_progress for the duration of the call.
    let p = TuneProgress::from_raw(&*progress);
    // AssertUnwindSafe: after a panic the closure is never called again, and the panic is
    // resumed in the caller, so whatever state it left half-updated is seen exactly as with
    // an ordinary panic.
    match panic::catch_unwind(AssertUnwindSafe(|| (state.progress)(&p))) {
        Ok(ControlFlow::Continue(())) => 0,
        Ok(ControlFlow::Break(())) => 1,
        Err(payload) => {
            state.panic = Some(payload);
            1
        }
    }
}

impl Program {
    /// Searches the backend's knobs for the fastest kernel of def `entry` on these inputs
    /// (`tc_tune`), stores the best in the compilation cache and returns it compiled. A later
    /// [`Program::compile`] of the same def and shapes with the same cache (and no knobs set
    /// explicitly) compiles with the tuned knob values: [`Kernel::cache_hit`] says so.
    ///
    /// The inputs' data is read (never written) to measure and check candidates: a candidate
    /// whose outputs differ from the starting point's is discarded. `options` are as for
    /// `compile`: the knob values they set are the starting point (the "default"); `cache`
    /// is `auto` (the default directory), `off` (tune without storing) or a directory, which
    /// must be owned by this user and not writable by group or others (created `0700` if
    /// missing); `tune.budget` (seconds, default 60, up to 3 decimals; the starting point is
    /// measured and stored first, whatever the budget), `tune.population`, `tune.generations`,
    /// `tune.strategy` and `tune.threads` shape the search. Candidates are timed one at a
    /// time: keep the machine otherwise idle meanwhile.
    ///
    /// `progress` is called after every measured candidate (the starting point first);
    /// returning `ControlFlow::Break(())` stops the search, keeping the best so far. libtc calls it from inside
    /// `tc_tune`, today on the calling thread (hence `Send`: tc.h does not promise which
    /// thread). Pass `None` for a silent search; `|p| { eprintln!("{}", p); ControlFlow::Continue(()) }` prints a
    /// line per candidate.
    ///
    /// Errors: an unknown entry or mismatching inputs as for `compile`; `Status::Cache`
    /// before any tuning when the cache cannot be written (unsafe permissions, damaged
    /// database); a starting point that fails to compile or run fails as `compile` and
    /// [`Kernel::run`] would.
    ///
    /// # Panics
    ///
    /// A panic in `progress` never unwinds through libtc: it is caught, the search stops at
    /// once (the best so far may already be in the cache, as after a normal stop), the kernel
    /// is dropped, and the panic is resumed here, on the calling thread, with its original
    /// payload, once `tc_tune` has returned.
    ///
    /// ```no_run
    /// use std::ops::ControlFlow;
    /// use tc::{Options, Program, TensorRef};
    ///
    /// # fn main() -> Result<(), tc::Error> {
    /// let program = Program::define("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }")?;
    /// let (a, b) = (vec![1.0f32; 64 * 32], vec![1.0f32; 32 * 48]);
    /// let inputs = [TensorRef::new(&a, &[64, 32])?, TensorRef::new(&b, &[32, 48])?];
    /// let options = Options::new()?.with("tune.budget", "30")?;
    /// let kernel = program.tune("mm", &inputs, &options, Some(&mut |p: &tc::TuneProgress| {
    ///     eprintln!("{}", p);
    ///     ControlFlow::Continue(()) // keep going
    /// }))?;
    /// assert!(program.compile("mm", &inputs, &Options::new()?)?.cache_hit()?);
    /// # drop(kernel);
    /// # Ok(())
    /// # }
    /// ```
    pub fn tune(
        &self,
        entry: &str,
        inputs: &[TensorRef],
        options: &Options,
        progress: Option<&mut TuneCallback<'_>>,
    ) -> Result<Kernel> {
        let entry = crate::c_string(entry, "entry")?;
        let dl: Vec<sys::DLTensor> = inputs.iter().map(TensorRef::as_dltensor).collect();
        let mut raw = ptr::null_mut();
        let mut state = progress.map(|progress| TuneState { progress, panic: None });
        let (callback, user): (sys::tc_tune_callback, *mut c_void) = match &mut state {
            Some(state) => (Some(trampoline), state as *mut TuneState as *mut c_void),
            None => (None, ptr::null_mut()),
        };
        // SAFETY: valid handles; `dl` points into `inputs` and `user` at `state`, all of which
        // outlive the call; the trampoline never unwinds.
        let status = unsafe {
            sys::tc_tune(
                &mut raw,
                self.raw.as_ptr(),
                entry.as_ptr(),
                dl.as_ptr(),
                dl.len(),
                options.raw.as_ptr(),
                callback,
                user,
            )
        };
        // Read the error message first: it is per thread and the next libtc call may replace it.
        let result = check(status);
        if let Some(payload) = state.and_then(|s| s.panic) {
            // SAFETY: a kernel tc_tune returned (NULL is a no-op), destroyed once.
            unsafe { sys::tc_kernel_destroy(raw) };
            panic::resume_unwind(payload);
        }
        result?;
        NonNull::new(raw)
            .map(|raw| Kernel { raw })
            .ok_or_else(|| Error::new(Status::Internal, "tc_tune returned NULL"))
    }
}

/// Which tier of the compilation cache served a kernel's knob values ([`Kernel::cache_tier`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheTier {
    /// The local cache (option `cache`).
    Local,
    /// The remote tier (option `cache.remote`); the record is now in the local cache too.
    Remote,
}

impl Kernel {
    /// Which cache tier served the kernel's knob values (`tc_kernel_cache_hit`), or `None` when
    /// they did not come from the cache.
    pub fn cache_tier(&self) -> Result<Option<CacheTier>> {
        let mut hit: c_int = 0;
        // SAFETY: valid handle, out-pointer to a local.
        check(unsafe { sys::tc_kernel_cache_hit(self.raw.as_ptr(), &mut hit) })?;
        Ok(match hit {
            0 => None,
            1 => Some(CacheTier::Local),
            _ => Some(CacheTier::Remote),
        })
    }

    /// True if the kernel's knob values came from the compilation cache
    /// (`tc_kernel_cache_hit`); [`Kernel::describe`] says from where, or why the cache was not
    /// used.
    pub fn cache_hit(&self) -> Result<bool> {
        let mut hit: c_int = 0;
        // SAFETY: valid handle, out-pointer to a local.
        check(unsafe { sys::tc_kernel_cache_hit(self.raw.as_ptr(), &mut hit) })?;
        Ok(hit != 0)
    }

    /// libtc's description of the kernel (`tc_kernel_describe`): every option with its value,
    /// where the knob values came from (a cache hit with its directory, a miss, a tuning run,
    /// or why the cache was not used), the backend and the schedule it chose.
    pub fn describe(&self) -> Result<String> {
        let mut text = ptr::null();
        // SAFETY: valid handle; the text is owned by the kernel and copied out.
        check(unsafe { sys::tc_kernel_describe(self.raw.as_ptr(), &mut text) })?;
        Ok(owned(text))
    }

    /// The code the kernel runs, as text (`tc_kernel_code`): the Halide loop nest for
    /// backend=cpu; an `Unsupported` error for backend=reference, which generates none.
    pub fn code(&self) -> Result<String> {
        let mut text = ptr::null();
        // SAFETY: valid handle; the text is owned by the kernel and copied out.
        check(unsafe { sys::tc_kernel_code(self.raw.as_ptr(), &mut text) })?;
        Ok(owned(text))
    }
}

/// A path as a C string: its bytes as the OS has them (a NUL inside is an error).
fn c_path(path: &Path, what: &str) -> Result<std::ffi::CString> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| Error::new(Status::InvalidArgument, format!("{} contains a NUL character", what)))
    }
    #[cfg(not(unix))]
    {
        match path.to_str() {
            Some(s) => crate::c_string(s, what),
            None => Err(Error::new(Status::InvalidArgument, format!("{} is not valid Unicode", what))),
        }
    }
}

fn transfer(
    f: unsafe extern "C" fn(*const std::os::raw::c_char, *const std::os::raw::c_char) -> c_int,
    cache_dir: Option<&Path>,
    file: &Path,
) -> Result<()> {
    let dir = cache_dir.map(|d| c_path(d, "cache directory")).transpose()?;
    let file = c_path(file, "file name")?;
    // SAFETY: C strings (or NULL for the default directory) that outlive the call.
    check(unsafe { f(dir.as_ref().map_or(ptr::null(), |d| d.as_ptr()), file.as_ptr()) })
}

/// Writes every record of a compilation cache into one portable file, whole or not at all
/// (`tc_cache_export`). `cache_dir` `None` is the default directory of option `cache=auto`
/// (`$TC_CACHE_DIR`, else `$XDG_CACHE_HOME/libtc`, else `~/.cache/libtc`). Errors are
/// `Status::Cache`, naming the path and the problem.
pub fn cache_export(cache_dir: Option<&Path>, file: impl AsRef<Path>) -> Result<()> {
    transfer(sys::tc_cache_export, cache_dir, file.as_ref())
}

/// Merges a file written by [`cache_export`] into a compilation cache (`tc_cache_import`;
/// `cache_dir` `None`: the default directory; created `0700` if missing), keeping the faster
/// entry per key. The whole file is checked first; records tuned for another target are kept
/// but never used here. A file that is not such an export, or a cache that cannot be written,
/// is `Status::Cache`, naming the path and the problem.
pub fn cache_import(cache_dir: Option<&Path>, file: impl AsRef<Path>) -> Result<()> {
    transfer(sys::tc_cache_import, cache_dir, file.as_ref())
}

fn remote_transfer(
    f: unsafe extern "C" fn(*const std::os::raw::c_char, *const sys::tc_options, *mut usize) -> c_int,
    cache_dir: Option<&Path>,
    options: &Options,
) -> Result<usize> {
    let dir = cache_dir.map(|d| c_path(d, "cache directory")).transpose()?;
    let mut records = 0usize;
    // SAFETY: a C string (or NULL) and a valid options handle that outlive the call; an
    // out-pointer to a local.
    check(unsafe {
        f(dir.as_ref().map_or(ptr::null(), |d| d.as_ptr()), options.raw.as_ptr(), &mut records)
    })?;
    Ok(records)
}

/// Copies every record and tuning history entry of a local compilation cache (`cache_dir`
/// `None`: the default directory) to the remote tier that `options` name (`cache.remote`,
/// `cache.remote_key`, `cache.remote_timeout`), which keeps the faster record per key
/// (`tc_cache_push`). Returns the number of records the remote stored. `cache.remote=off` is
/// `Status::InvalidArgument`; a server that cannot be used or a key file libtc refuses is
/// `Status::Cache`, naming it.
pub fn cache_push(cache_dir: Option<&Path>, options: &Options) -> Result<usize> {
    remote_transfer(sys::tc_cache_push, cache_dir, options)
}

/// The other way (`tc_cache_pull`): the remote tier's records whose signature verifies, and
/// their history, into a local cache (created `0700` if missing), keeping the faster per key.
/// Returns the number of records stored locally. Errors as [`cache_push`].
pub fn cache_pull(cache_dir: Option<&Path>, options: &Options) -> Result<usize> {
    remote_transfer(sys::tc_cache_pull, cache_dir, options)
}
