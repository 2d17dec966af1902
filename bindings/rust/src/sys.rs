//! Raw declarations of libtc's C API (`include/tc/tc.h`) and the DLPack types it uses
//! (`dlpack/dlpack.h`), one to one, for callers who need the C contract itself. Everything
//! here is `unsafe` to call and follows tc.h's rules; the crate root is the safe layer.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

/// Highest rank of any tensor.
pub const TC_MAX_NDIM: usize = 16;
/// DLPack's type code for bool; bool tensors are `{TC_DL_BOOL, 8, 1}`.
pub const TC_DL_BOOL: u8 = 6;

pub const TC_OK: c_int = 0;
pub const TC_ERROR_INVALID_ARGUMENT: c_int = -1;
pub const TC_ERROR_SYNTAX: c_int = -2;
pub const TC_ERROR_SEMANTIC: c_int = -3;
pub const TC_ERROR_SHAPE: c_int = -4;
pub const TC_ERROR_UNSUPPORTED: c_int = -5;
pub const TC_ERROR_COMPILE: c_int = -6;
pub const TC_ERROR_RUNTIME: c_int = -7;
pub const TC_ERROR_CACHE: c_int = -8;
pub const TC_ERROR_NO_MEMORY: c_int = -9;
pub const TC_ERROR_INTERNAL: c_int = -10;

/// `DLDeviceType`: only the CPU is used by libtc.
pub const K_DL_CPU: i32 = 1;
/// `DLDataTypeCode` values.
pub const K_DL_INT: u8 = 0;
pub const K_DL_UINT: u8 = 1;
pub const K_DL_FLOAT: u8 = 2;
pub const K_DL_BFLOAT: u8 = 4;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLDevice {
    pub device_type: i32,
    pub device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64, // in elements; NULL: row-major
    pub byte_offset: u64,
}

/// Opaque handles.
#[repr(C)]
pub struct tc_program {
    _private: [u8; 0],
}
#[repr(C)]
pub struct tc_kernel {
    _private: [u8; 0],
}
#[repr(C)]
pub struct tc_options {
    _private: [u8; 0],
}

// Every struct the library fills starts with its size, set by the caller to the struct's size
// (tc.h): the `empty()` constructors do.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tc_tensor_info {
    pub size: u32,
    pub dtype: DLDataType,
    pub ndim: i32,
    pub shape: [i64; TC_MAX_NDIM],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tc_param_info {
    pub size: u32,
    pub name: *const c_char,
    pub dtype: DLDataType,
    pub ndim: i32,
    pub dims: [*const c_char; TC_MAX_NDIM],
}

impl tc_tensor_info {
    /// Zero fields, the size set: what a call that fills one takes.
    pub fn empty() -> tc_tensor_info {
        tc_tensor_info {
            size: std::mem::size_of::<tc_tensor_info>() as u32,
            dtype: DLDataType { code: 0, bits: 0, lanes: 0 },
            ndim: 0,
            shape: [0; TC_MAX_NDIM],
        }
    }
}

impl tc_param_info {
    /// Null fields, the size set: what a call that fills one takes.
    pub fn empty() -> tc_param_info {
        tc_param_info {
            size: std::mem::size_of::<tc_param_info>() as u32,
            name: std::ptr::null(),
            dtype: DLDataType { code: 0, bits: 0, lanes: 0 },
            ndim: 0,
            dims: [std::ptr::null(); TC_MAX_NDIM],
        }
    }
}

/// Where a `tc_tune` search stands, passed to its callback after every measured candidate.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct tc_tune_progress {
    pub size: u32,        // set by the library
    pub generation: i32,  // 1-based current generation
    pub generations: i32, // planned total
    pub candidates_done: i64,
    pub candidates_planned: i64,
    pub best_ms: f64,    // median time of the best so far
    pub default_ms: f64, // median time of the starting point (the options' own knob values)
    pub elapsed_s: f64,
    pub budget_s: f64,
}

/// `tc_tune_callback`: return non-zero to stop (the best so far is kept). `None` is NULL.
pub type tc_tune_callback =
    Option<unsafe extern "C" fn(progress: *const tc_tune_progress, user: *mut c_void) -> c_int>;

extern "C" {
    pub fn tc_version_number() -> c_int;
    pub fn tc_version_string() -> *const c_char;
    pub fn tc_strerror(status: c_int) -> *const c_char;
    pub fn tc_last_error_message() -> *const c_char;

    pub fn tc_define(out: *mut *mut tc_program, source: *const c_char) -> c_int;
    pub fn tc_define_named(
        out: *mut *mut tc_program,
        source: *const c_char,
        source_name: *const c_char,
    ) -> c_int;
    pub fn tc_program_destroy(program: *mut tc_program);
    pub fn tc_program_num_defs(program: *const tc_program, count: *mut usize) -> c_int;
    pub fn tc_program_def_name(program: *const tc_program, index: usize, name: *mut *const c_char) -> c_int;
    pub fn tc_program_num_params(
        program: *const tc_program,
        entry: *const c_char,
        num_inputs: *mut usize,
        num_outputs: *mut usize,
    ) -> c_int;
    pub fn tc_program_input_info(
        program: *const tc_program,
        entry: *const c_char,
        index: usize,
        info: *mut tc_param_info,
    ) -> c_int;
    pub fn tc_program_output_info(
        program: *const tc_program,
        entry: *const c_char,
        index: usize,
        info: *mut tc_param_info,
    ) -> c_int;
    pub fn tc_program_describe(
        program: *const tc_program,
        entry: *const c_char,
        text: *mut *const c_char,
    ) -> c_int;
    pub fn tc_program_source(program: *const tc_program, text: *mut *const c_char) -> c_int;
    pub fn tc_gradient(out: *mut *mut tc_program, program: *const tc_program, entry: *const c_char) -> c_int;
    pub fn tc_infer_outputs(
        program: *const tc_program,
        entry: *const c_char,
        inputs: *const DLTensor,
        num_inputs: usize,
        outputs: *mut tc_tensor_info,
        num_outputs: *mut usize,
    ) -> c_int;

    pub fn tc_option_info(
        index: usize,
        key: *mut *const c_char,
        values: *mut *const c_char,
        default_value: *mut *const c_char,
        help: *mut *const c_char,
    ) -> c_int;
    pub fn tc_options_create(out: *mut *mut tc_options) -> c_int;
    pub fn tc_options_set(options: *mut tc_options, key: *const c_char, value: *const c_char) -> c_int;
    pub fn tc_options_get(options: *const tc_options, key: *const c_char, value: *mut *const c_char)
        -> c_int;
    pub fn tc_options_destroy(options: *mut tc_options);

    pub fn tc_compile(
        out: *mut *mut tc_kernel,
        program: *const tc_program,
        entry: *const c_char,
        inputs: *const DLTensor,
        num_inputs: usize,
        options: *const tc_options,
    ) -> c_int;
    pub fn tc_tune(
        out: *mut *mut tc_kernel,
        program: *const tc_program,
        entry: *const c_char,
        inputs: *const DLTensor,
        num_inputs: usize,
        options: *const tc_options,
        callback: tc_tune_callback,
        user: *mut c_void,
    ) -> c_int;
    pub fn tc_cache_export(cache_dir: *const c_char, file: *const c_char) -> c_int;
    pub fn tc_cache_import(cache_dir: *const c_char, file: *const c_char) -> c_int;
    pub fn tc_cache_push(cache_dir: *const c_char, options: *const tc_options, records: *mut usize) -> c_int;
    pub fn tc_cache_pull(cache_dir: *const c_char, options: *const tc_options, records: *mut usize) -> c_int;

    pub fn tc_kernel_num_outputs(kernel: *const tc_kernel, count: *mut usize) -> c_int;
    pub fn tc_kernel_output_info(kernel: *const tc_kernel, index: usize, info: *mut tc_tensor_info) -> c_int;
    pub fn tc_kernel_describe(kernel: *const tc_kernel, text: *mut *const c_char) -> c_int;
    pub fn tc_kernel_code(kernel: *const tc_kernel, text: *mut *const c_char) -> c_int;
    pub fn tc_kernel_cache_hit(kernel: *const tc_kernel, hit: *mut c_int) -> c_int;
    pub fn tc_run(
        kernel: *const tc_kernel,
        inputs: *const DLTensor,
        num_inputs: usize,
        outputs: *mut DLTensor,
        num_outputs: usize,
    ) -> c_int;
    pub fn tc_run_async(
        kernel: *const tc_kernel,
        inputs: *const DLTensor,
        num_inputs: usize,
        outputs: *mut DLTensor,
        num_outputs: usize,
        stream: *mut c_void,
    ) -> c_int;
    pub fn tc_kernel_destroy(kernel: *mut tc_kernel);
}
