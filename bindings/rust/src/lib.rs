//! Safe Rust binding of libtc, the Tensor Comprehensions compiler (`include/tc/tc.h`).
//!
//! A thin layer: libtc parses, checks, infers shapes and runs; this crate owns the C handles,
//! turns statuses into [`Error`]s and lends Rust slices to libtc as DLPack tensors without
//! copying them ([`TensorRef`], [`TensorMut`]). The raw C API is in [`sys`].
//!
//! ```
//! use tc::{Options, Program, TensorMut, TensorRef};
//!
//! # fn main() -> Result<(), tc::Error> {
//! let program = Program::define("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }")?;
//! let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2x3, row-major
//! let b = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0]; // 3x2
//! let inputs = [TensorRef::new(&a, &[2, 3])?, TensorRef::new(&b, &[3, 2])?];
//!
//! let kernel = program.compile("mm", &inputs, &Options::new()?)?;
//! let info = &kernel.outputs()?[0]; // float32, shape [2, 2]
//! let mut c = vec![0.0f32; info.num_elements()];
//! kernel.run(&inputs, &mut [TensorMut::new(&mut c, &info.dims())?])?;
//! assert_eq!(c, [4.0, 5.0, 10.0, 11.0]);
//! # Ok(())
//! # }
//! ```
//!
//! Errors carry libtc's status and message:
//!
//! ```
//! let err = tc::Program::define("def f(float(N) A) -> (B) { B(i) = C(i) }").unwrap_err();
//! assert_eq!(err.status(), tc::Status::Semantic);
//! assert!(err.message().contains("unknown tensor or function 'C'"));
//! ```
//!
//! Element types are checked at compile time: a `char` slice is not a tensor.
//!
//! ```compile_fail,E0277
//! let t = tc::TensorRef::new(&['a', 'b'], &[2]);
//! ```
//!
//! And an output cannot alias an input: the borrow checker refuses it.
//!
//! ```compile_fail,E0502
//! let mut v = vec![0f32; 3];
//! let input = tc::TensorRef::new(&v, &[3]).unwrap();
//! let output = tc::TensorMut::new(&mut v, &[3]).unwrap();
//! drop(input);
//! ```
//!
//! The autotuner: [`Program::tune`] searches a def's schedule knobs on real inputs and stores
//! the fastest in the compilation cache, which later [`Program::compile`] calls use
//! ([`Kernel::cache_hit`]); [`cache_export`] and [`cache_import`] move a cache between machines,
//! and [`cache_push`] and [`cache_pull`] between a machine and the remote tier a cluster shares
//! (option `cache.remote`; [`Kernel::cache_tier`] says which tier served a kernel;
//! docs/guide/tuning-and-cache.md).
//!
//! Thread safety follows tc.h: [`Program`] and [`Kernel`] are immutable and `Send + Sync`
//! (run one kernel from many threads at once); [`Options`] is `Send + Sync` too, and
//! [`Options::set`] takes `&mut self`, so it cannot race with a compile that reads it.
//! Ownership: every handle is freed on drop; a [`Kernel`] does not borrow its [`Program`].
pub mod sys;

mod error;
mod tensor;
mod tune;

pub use error::{Error, Result, Status};
pub use tensor::{DataType, Element, TensorInfo, TensorMut, TensorRef, BF16, F16};
pub use tune::{cache_export, cache_import, cache_pull, cache_push, CacheTier, TuneCallback, TuneProgress};

use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::ptr::{self, NonNull};

use error::check;

/// A Rust string as a C string; a NUL inside cannot cross into C.
fn c_string(s: &str, what: &str) -> Result<CString> {
    CString::new(s)
        .map_err(|_| Error::new(Status::InvalidArgument, format!("{} contains a NUL character", what)))
}

/// A string owned by a libtc handle, copied out.
fn owned(s: *const c_char) -> String {
    if s.is_null() {
        return String::new();
    }
    // SAFETY: libtc returns NUL-terminated strings that live as long as their handle.
    unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
}

/// The version string of the loaded libtc, e.g. "0.1.0".
pub fn version() -> String {
    // SAFETY: static string.
    owned(unsafe { sys::tc_version_string() })
}

/// A def's parameter as written (`tc_param_info`): dims are size names, literals or, for
/// outputs, the inferred extent in size names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    pub name: String,
    pub dtype: DataType,
    pub dims: Vec<String>,
}

/// Compile options (`tc_options`): string keys and values, checked by libtc when set
/// (`backend`, `checked`, ... see tc.h).
#[derive(Debug)]
pub struct Options {
    raw: NonNull<sys::tc_options>,
}

// SAFETY: tc.h: options may be read by many threads; set() needs &mut, so never concurrently.
unsafe impl Send for Options {}
unsafe impl Sync for Options {}

impl Options {
    /// Options with every key at its default.
    pub fn new() -> Result<Options> {
        let mut raw = ptr::null_mut();
        // SAFETY: out-pointer to a local.
        check(unsafe { sys::tc_options_create(&mut raw) })?;
        NonNull::new(raw)
            .map(|raw| Options { raw })
            .ok_or_else(|| Error::new(Status::Internal, "tc_options_create returned NULL"))
    }

    /// Sets `key` to `value`; an unknown key or value is `Status::InvalidArgument`.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let (key, value) = (c_string(key, "option key")?, c_string(value, "option value")?);
        // SAFETY: valid handle and C strings.
        check(unsafe { sys::tc_options_set(self.raw.as_ptr(), key.as_ptr(), value.as_ptr()) })
    }

    /// `set` in builder style: `Options::new()?.with("backend", "reference")?`.
    pub fn with(mut self, key: &str, value: &str) -> Result<Options> {
        self.set(key, value)?;
        Ok(self)
    }

    /// The value of `key`: what was set, else libtc's default.
    pub fn get(&self, key: &str) -> Result<String> {
        let key = c_string(key, "option key")?;
        let mut value = ptr::null();
        // SAFETY: valid handle; the value is copied before the options can change.
        check(unsafe { sys::tc_options_get(self.raw.as_ptr(), key.as_ptr(), &mut value) })?;
        Ok(owned(value))
    }
}

impl Drop for Options {
    fn drop(&mut self) {
        // SAFETY: owned handle, destroyed once.
        unsafe { sys::tc_options_destroy(self.raw.as_ptr()) }
    }
}

/// Parsed and checked TC source: one or more defs (`tc_program`).
#[derive(Debug)]
pub struct Program {
    raw: NonNull<sys::tc_program>,
}

// SAFETY: tc.h: a program is immutable once created and may be used by any number of threads.
unsafe impl Send for Program {}
unsafe impl Sync for Program {}

impl Program {
    /// Parses and checks `source` (`tc_define`); errors name `<def>:<line>:<col>`.
    pub fn define(source: &str) -> Result<Program> {
        Self::define_impl(source, None)
    }

    /// As [`Program::define`], with diagnostics starting with `name` (e.g. a file name).
    pub fn define_named(source: &str, name: &str) -> Result<Program> {
        Self::define_impl(source, Some(name))
    }

    fn define_impl(source: &str, name: Option<&str>) -> Result<Program> {
        let source = c_string(source, "TC source")?;
        let name = name.map(|n| c_string(n, "source name")).transpose()?;
        let mut raw = ptr::null_mut();
        // SAFETY: C strings and an out-pointer to a local.
        check(unsafe {
            match &name {
                Some(name) => sys::tc_define_named(&mut raw, source.as_ptr(), name.as_ptr()),
                None => sys::tc_define(&mut raw, source.as_ptr()),
            }
        })?;
        NonNull::new(raw)
            .map(|raw| Program { raw })
            .ok_or_else(|| Error::new(Status::Internal, "tc_define returned NULL"))
    }

    /// The def names, in source order.
    pub fn def_names(&self) -> Result<Vec<String>> {
        let mut count = 0;
        // SAFETY: valid handle, out-pointers to locals.
        check(unsafe { sys::tc_program_num_defs(self.raw.as_ptr(), &mut count) })?;
        (0..count)
            .map(|i| {
                let mut name = ptr::null();
                check(unsafe { sys::tc_program_def_name(self.raw.as_ptr(), i, &mut name) })?;
                Ok(owned(name))
            })
            .collect()
    }

    fn params(&self, entry: &str, outputs: bool) -> Result<Vec<ParamInfo>> {
        let entry = c_string(entry, "entry")?;
        let (mut num_inputs, mut num_outputs) = (0, 0);
        // SAFETY: valid handle, C string, out-pointers to locals; strings copied out.
        check(unsafe {
            sys::tc_program_num_params(self.raw.as_ptr(), entry.as_ptr(), &mut num_inputs, &mut num_outputs)
        })?;
        let count = if outputs { num_outputs } else { num_inputs };
        (0..count)
            .map(|i| {
                let mut info = sys::tc_param_info::empty();
                check(unsafe {
                    if outputs {
                        sys::tc_program_output_info(self.raw.as_ptr(), entry.as_ptr(), i, &mut info)
                    } else {
                        sys::tc_program_input_info(self.raw.as_ptr(), entry.as_ptr(), i, &mut info)
                    }
                })?;
                // ndim -1: a type with `...` (rank-polymorphic); its dims end at the first NULL
                let ndim = if info.ndim >= 0 {
                    (info.ndim as usize).min(sys::TC_MAX_NDIM)
                } else {
                    info.dims.iter().position(|d| d.is_null()).unwrap_or(sys::TC_MAX_NDIM)
                };
                Ok(ParamInfo {
                    name: owned(info.name),
                    dtype: DataType(info.dtype),
                    dims: info.dims[..ndim].iter().map(|&d| owned(d)).collect(),
                })
            })
            .collect()
    }

    /// The inputs of def `entry` as written.
    pub fn inputs(&self, entry: &str) -> Result<Vec<ParamInfo>> {
        self.params(entry, false)
    }

    /// The outputs of def `entry`, dtypes and extents inferred.
    pub fn outputs(&self, entry: &str) -> Result<Vec<ParamInfo>> {
        self.params(entry, true)
    }

    /// libtc's description of the inferred extents and index ranges of def `entry`.
    pub fn describe(&self, entry: &str) -> Result<String> {
        let entry = c_string(entry, "entry")?;
        let mut text = ptr::null();
        // SAFETY: valid handle, C string; the text is copied out.
        check(unsafe { sys::tc_program_describe(self.raw.as_ptr(), entry.as_ptr(), &mut text) })?;
        Ok(owned(text))
    }

    /// The program's TC source (`tc_program_source`): the text given to [`Program::define`],
    /// or the generated source of a program libtc made, such as [`Program::gradient`]'s.
    pub fn source(&self) -> Result<String> {
        let mut text = ptr::null();
        // SAFETY: valid handle; the text is owned by the program and copied out.
        check(unsafe { sys::tc_program_source(self.raw.as_ptr(), &mut text) })?;
        Ok(owned(text))
    }

    /// Reverse-mode differentiation of def `entry` (`None`: the only def) by libtc
    /// (`tc_gradient`): a new program holding one def, `"<entry>_grad"`. Its inputs are
    /// `entry`'s inputs followed by `"d_<output>"` for each floating-point output (that output's
    /// dtype and shape); its outputs are `"d_<input>"` for each floating-point input, in input
    /// order. Integer inputs and outputs carry no gradient. The new program does not borrow
    /// `self`; [`Program::source`] gives its TC.
    ///
    /// `Status::Unsupported`, naming the statement and the reason, where libtc cannot express a
    /// gradient (a `*=` reduction, no floating-point input or output, ...).
    ///
    /// ```
    /// # fn main() -> Result<(), tc::Error> {
    /// let mm = tc::Program::define("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }")?;
    /// let grad = mm.gradient(None)?;
    /// assert_eq!(grad.def_names()?, ["mm_grad"]);
    /// let names = |ps: Vec<tc::ParamInfo>| ps.into_iter().map(|p| p.name).collect::<Vec<_>>();
    /// assert_eq!(names(grad.inputs("mm_grad")?), ["A", "B", "d_C"]);
    /// assert_eq!(names(grad.outputs("mm_grad")?), ["d_A", "d_B"]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn gradient(&self, entry: Option<&str>) -> Result<Program> {
        let entry = entry.map(|e| c_string(e, "entry")).transpose()?;
        let mut raw = ptr::null_mut();
        // SAFETY: valid handle, C string or NULL (the only def), out-pointer to a local.
        check(unsafe {
            sys::tc_gradient(&mut raw, self.raw.as_ptr(), entry.as_ref().map_or(ptr::null(), |e| e.as_ptr()))
        })?;
        NonNull::new(raw)
            .map(|raw| Program { raw })
            .ok_or_else(|| Error::new(Status::Internal, "tc_gradient returned NULL"))
    }

    /// Output dtypes and shapes of def `entry` for these inputs (`tc_infer_outputs`).
    pub fn infer_outputs(&self, entry: &str, inputs: &[TensorRef]) -> Result<Vec<TensorInfo>> {
        let entry = c_string(entry, "entry")?;
        let dl: Vec<sys::DLTensor> = inputs.iter().map(TensorRef::as_dltensor).collect();
        let mut count = 0;
        // SAFETY: `dl` points into `inputs`, which outlive the calls; capacity rules of tc.h:
        // first the count (NULL, 0), then exactly that many.
        check(unsafe {
            sys::tc_infer_outputs(
                self.raw.as_ptr(),
                entry.as_ptr(),
                dl.as_ptr(),
                dl.len(),
                ptr::null_mut(),
                &mut count,
            )
        })?;
        let mut infos = vec![sys::tc_tensor_info::empty(); count];
        check(unsafe {
            sys::tc_infer_outputs(
                self.raw.as_ptr(),
                entry.as_ptr(),
                dl.as_ptr(),
                dl.len(),
                infos.as_mut_ptr(),
                &mut count,
            )
        })?;
        Ok(infos[..count.min(infos.len())].iter().map(TensorInfo::from_raw).collect())
    }

    /// Compiles def `entry` for the inputs' dtypes and shapes (`tc_compile`; the data is not
    /// read). The kernel keeps what it needs: the program and options may be dropped.
    pub fn compile(&self, entry: &str, inputs: &[TensorRef], options: &Options) -> Result<Kernel> {
        let entry = c_string(entry, "entry")?;
        let dl: Vec<sys::DLTensor> = inputs.iter().map(TensorRef::as_dltensor).collect();
        let mut raw = ptr::null_mut();
        // SAFETY: valid handles; `dl` points into `inputs`, which outlive the call.
        check(unsafe {
            sys::tc_compile(
                &mut raw,
                self.raw.as_ptr(),
                entry.as_ptr(),
                dl.as_ptr(),
                dl.len(),
                options.raw.as_ptr(),
            )
        })?;
        NonNull::new(raw)
            .map(|raw| Kernel { raw })
            .ok_or_else(|| Error::new(Status::Internal, "tc_compile returned NULL"))
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: owned handle, destroyed once; kernels do not depend on it.
        unsafe { sys::tc_program_destroy(self.raw.as_ptr()) }
    }
}

/// One def compiled for one input signature (`tc_kernel`).
#[derive(Debug)]
pub struct Kernel {
    raw: NonNull<sys::tc_kernel>,
}

// SAFETY: tc.h: a kernel is immutable; tc_run from many threads at once is fine.
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

impl Kernel {
    /// The dtype and shape of each output: what [`Kernel::run`] expects.
    pub fn outputs(&self) -> Result<Vec<TensorInfo>> {
        let mut count = 0;
        // SAFETY: valid handle, out-pointers to locals.
        check(unsafe { sys::tc_kernel_num_outputs(self.raw.as_ptr(), &mut count) })?;
        (0..count)
            .map(|i| {
                let mut info = sys::tc_tensor_info::empty();
                check(unsafe { sys::tc_kernel_output_info(self.raw.as_ptr(), i, &mut info) })?;
                Ok(TensorInfo::from_raw(&info))
            })
            .collect()
    }

    /// Runs the kernel (`tc_run`): libtc checks every tensor against the compiled signature
    /// and writes the outputs. Reductions without `!` accumulate into the outputs' contents;
    /// output elements no statement writes become 0.
    pub fn run(&self, inputs: &[TensorRef], outputs: &mut [TensorMut]) -> Result<()> {
        let dl_in: Vec<sys::DLTensor> = inputs.iter().map(TensorRef::as_dltensor).collect();
        let mut dl_out: Vec<sys::DLTensor> = outputs.iter_mut().map(TensorMut::as_dltensor).collect();
        // SAFETY: the DLTensors point into `inputs` (shared borrows) and `outputs` (exclusive
        // borrows), which outlive the call; libtc does not retain them.
        check(unsafe {
            sys::tc_run(self.raw.as_ptr(), dl_in.as_ptr(), dl_in.len(), dl_out.as_mut_ptr(), dl_out.len())
        })
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        // SAFETY: owned handle, destroyed once.
        unsafe { sys::tc_kernel_destroy(self.raw.as_ptr()) }
    }
}
