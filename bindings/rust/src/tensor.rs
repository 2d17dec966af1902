//! Tensor views over Rust slices, passed to libtc as DLTensors without copying.
//!
//! The element type is a type parameter checked at compile time: `TensorRef::new(&[f32], ..)`
//! is a float32 tensor and cannot be anything else, and only types implementing the sealed
//! [`Element`] trait (the dtypes TC has) are accepted. The one check done here rather than in
//! libtc is memory safety: every element the shape and strides reach must lie inside the
//! slice. Whether the tensor fits the def (dtype, rank, sizes) is libtc's to say.
use std::fmt;
use std::marker::PhantomData;
use std::os::raw::c_void;

use crate::error::{Error, Result, Status};
use crate::sys;

/// A DLPack data type (`DLDataType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataType(pub sys::DLDataType);

impl DataType {
    const fn new(code: u8, bits: u8) -> DataType {
        DataType(sys::DLDataType { code, bits, lanes: 1 })
    }
    pub const BOOL: DataType = DataType::new(sys::TC_DL_BOOL, 8);
    pub const UINT8: DataType = DataType::new(sys::K_DL_UINT, 8);
    pub const UINT16: DataType = DataType::new(sys::K_DL_UINT, 16);
    pub const UINT32: DataType = DataType::new(sys::K_DL_UINT, 32);
    pub const UINT64: DataType = DataType::new(sys::K_DL_UINT, 64);
    pub const INT8: DataType = DataType::new(sys::K_DL_INT, 8);
    pub const INT16: DataType = DataType::new(sys::K_DL_INT, 16);
    pub const INT32: DataType = DataType::new(sys::K_DL_INT, 32);
    pub const INT64: DataType = DataType::new(sys::K_DL_INT, 64);
    pub const FLOAT16: DataType = DataType::new(sys::K_DL_FLOAT, 16);
    pub const FLOAT32: DataType = DataType::new(sys::K_DL_FLOAT, 32);
    pub const FLOAT64: DataType = DataType::new(sys::K_DL_FLOAT, 64);
    pub const BFLOAT16: DataType = DataType::new(sys::K_DL_BFLOAT, 16);
}

impl fmt::Display for DataType {
    /// TC's name ("float32"), or the DLPack triple for a type TC does not have.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        let kind = match t.code {
            sys::TC_DL_BOOL if t.bits == 8 => return write!(f, "bool"),
            sys::K_DL_INT => "int",
            sys::K_DL_UINT => "uint",
            sys::K_DL_FLOAT => "float",
            sys::K_DL_BFLOAT => "bfloat",
            _ => "",
        };
        if kind.is_empty() || t.lanes != 1 {
            write!(f, "dlpack(code={}, bits={}, lanes={})", t.code, t.bits, t.lanes)
        } else {
            write!(f, "{}{}", kind, t.bits)
        }
    }
}

/// IEEE half-precision bits (TC's `float16`/`half`). Rust has no stable `f16`; convert with
/// your own code or a crate.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct F16(pub u16);

/// bfloat16 bits (TC's `bfloat16`/`bf16`): a float32's upper half. Rust has no `bf16`; from an
/// `f32` `x`, `BF16((x.to_bits() >> 16) as u16)` truncates (libtc rounds to nearest even).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BF16(pub u16);

mod sealed {
    pub trait Sealed {}
}

/// An element type TC has. Sealed: implemented exactly for `bool`, `u8`..`u64`, `i8`..`i64`,
/// [`F16`], `f32`, `f64`, [`BF16`], with their DLPack dtype. (libtc writes bool elements as 0 or 1.)
pub trait Element: Copy + sealed::Sealed + 'static {
    const DTYPE: DataType;
}

macro_rules! elements {
    ($($t:ty => $dtype:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DataType = DataType::$dtype;
        }
    )*};
}
elements!(bool => BOOL, u8 => UINT8, u16 => UINT16, u32 => UINT32, u64 => UINT64,
          i8 => INT8, i16 => INT16, i32 => INT32, i64 => INT64,
          F16 => FLOAT16, f32 => FLOAT32, f64 => FLOAT64, BF16 => BFLOAT16);

/// Shape and element strides of a view, checked to stay inside `len` elements.
#[derive(Clone, Debug)]
struct Layout {
    shape: Vec<i64>,
    strides: Vec<i64>,
}

fn invalid(message: String) -> Error {
    Error::new(Status::InvalidArgument, message)
}

fn to_i64(x: usize, what: &str) -> Result<i64> {
    i64::try_from(x).map_err(|_| invalid(format!("{} {} does not fit in int64", what, x)))
}

impl Layout {
    fn row_major(shape: &[usize], len: usize) -> Result<Layout> {
        let mut strides = vec![0usize; shape.len()];
        let mut count: usize = 1;
        for d in (0..shape.len()).rev() {
            strides[d] = count;
            count =
                count.checked_mul(shape[d]).ok_or_else(|| invalid(format!("shape {:?} overflows", shape)))?;
        }
        if count != len {
            return Err(invalid(format!(
                "shape {:?} has {} elements, but the slice has {}",
                shape, count, len
            )));
        }
        Layout::strided(shape, &strides, len)
    }

    fn strided(shape: &[usize], strides: &[usize], len: usize) -> Result<Layout> {
        if shape.len() != strides.len() {
            return Err(invalid(format!("{} extents but {} strides", shape.len(), strides.len())));
        }
        // The farthest element reached is sum((extent - 1) * stride); it must be in the slice.
        if !shape.contains(&0) {
            let mut last: usize = 0;
            for (&n, &s) in shape.iter().zip(strides) {
                last = (n - 1).checked_mul(s).and_then(|x| x.checked_add(last)).ok_or_else(|| {
                    invalid(format!("shape {:?} with strides {:?} overflows", shape, strides))
                })?;
            }
            if last >= len {
                return Err(invalid(format!(
                    "shape {:?} with strides {:?} reaches element {}, but the slice has {}",
                    shape, strides, last, len
                )));
            }
        }
        let shape = shape.iter().map(|&n| to_i64(n, "extent")).collect::<Result<_>>()?;
        let strides = strides.iter().map(|&s| to_i64(s, "stride")).collect::<Result<_>>()?;
        Ok(Layout { shape, strides })
    }

    fn dltensor(&self, data: *mut c_void, dtype: DataType) -> sys::DLTensor {
        sys::DLTensor {
            data,
            device: sys::DLDevice { device_type: sys::K_DL_CPU, device_id: 0 },
            ndim: self.shape.len() as i32,
            dtype: dtype.0,
            // libtc reads but never writes shape and strides (const in spirit).
            shape: self.shape.as_ptr() as *mut i64,
            strides: self.strides.as_ptr() as *mut i64,
            byte_offset: 0,
        }
    }
}

/// A read-only tensor view borrowing a slice: an input of [`Kernel::run`](crate::Kernel::run),
/// [`Program::compile`](crate::Program::compile) and
/// [`Program::infer_outputs`](crate::Program::infer_outputs).
#[derive(Clone, Debug)]
pub struct TensorRef<'a> {
    data: *const c_void,
    dtype: DataType,
    layout: Layout,
    _borrow: PhantomData<&'a [u8]>,
}

// SAFETY: a TensorRef is a shared borrow of a slice of plain `Element` values, like &[T].
unsafe impl Send for TensorRef<'_> {}
unsafe impl Sync for TensorRef<'_> {}

impl<'a> TensorRef<'a> {
    /// A row-major (C order) view: `data.len()` must equal the product of `shape`.
    pub fn new<T: Element>(data: &'a [T], shape: &[usize]) -> Result<Self> {
        Ok(Self::from_parts(data, Layout::row_major(shape, data.len())?))
    }

    /// A view with element strides (column-major, transposed, sliced, ...); every element
    /// the shape and strides reach must be inside `data`. Start a view at an offset by
    /// slicing: `&data[offset..]`.
    pub fn with_strides<T: Element>(data: &'a [T], shape: &[usize], strides: &[usize]) -> Result<Self> {
        Ok(Self::from_parts(data, Layout::strided(shape, strides, data.len())?))
    }

    /// A 0-d tensor (a TC scalar parameter such as `float alpha`).
    pub fn scalar<T: Element>(value: &'a T) -> Self {
        Self::from_parts(std::slice::from_ref(value), Layout { shape: vec![], strides: vec![] })
    }

    fn from_parts<T: Element>(data: &'a [T], layout: Layout) -> Self {
        TensorRef { data: data.as_ptr() as *const c_void, dtype: T::DTYPE, layout, _borrow: PhantomData }
    }

    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    pub fn shape(&self) -> &[i64] {
        &self.layout.shape
    }

    pub fn strides(&self) -> &[i64] {
        &self.layout.strides
    }

    /// The DLTensor; valid while `self` is (it points into the slice and `self`'s layout).
    pub fn as_dltensor(&self) -> sys::DLTensor {
        self.layout.dltensor(self.data as *mut c_void, self.dtype)
    }
}

/// A mutable tensor view borrowing a slice: an output of [`Kernel::run`](crate::Kernel::run).
/// Because it holds a `&mut` borrow, an output can never alias an input or another output
/// view of the same slice in safe code.
#[derive(Debug)]
pub struct TensorMut<'a> {
    data: *mut c_void,
    dtype: DataType,
    layout: Layout,
    _borrow: PhantomData<&'a mut [u8]>,
}

// SAFETY: a TensorMut is an exclusive borrow of a slice of plain `Element` values, like &mut [T].
unsafe impl Send for TensorMut<'_> {}
unsafe impl Sync for TensorMut<'_> {}

impl<'a> TensorMut<'a> {
    /// A row-major view: `data.len()` must equal the product of `shape`.
    pub fn new<T: Element>(data: &'a mut [T], shape: &[usize]) -> Result<Self> {
        let layout = Layout::row_major(shape, data.len())?;
        Ok(Self::from_parts(data, layout))
    }

    /// A view with element strides; every element reached must be inside `data`.
    pub fn with_strides<T: Element>(data: &'a mut [T], shape: &[usize], strides: &[usize]) -> Result<Self> {
        let layout = Layout::strided(shape, strides, data.len())?;
        Ok(Self::from_parts(data, layout))
    }

    /// A 0-d output.
    pub fn scalar<T: Element>(value: &'a mut T) -> Self {
        Self::from_parts(std::slice::from_mut(value), Layout { shape: vec![], strides: vec![] })
    }

    fn from_parts<T: Element>(data: &'a mut [T], layout: Layout) -> Self {
        TensorMut { data: data.as_mut_ptr() as *mut c_void, dtype: T::DTYPE, layout, _borrow: PhantomData }
    }

    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    pub fn shape(&self) -> &[i64] {
        &self.layout.shape
    }

    pub fn strides(&self) -> &[i64] {
        &self.layout.strides
    }

    /// The DLTensor; valid while `self` is.
    pub fn as_dltensor(&mut self) -> sys::DLTensor {
        self.layout.dltensor(self.data, self.dtype)
    }
}

/// Type and shape of a tensor (`tc_tensor_info`): what [`Program::infer_outputs`](crate::Program::infer_outputs)
/// and [`Kernel::outputs`](crate::Kernel::outputs) report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    pub dtype: DataType,
    pub shape: Vec<i64>,
}

impl TensorInfo {
    pub(crate) fn from_raw(info: &sys::tc_tensor_info) -> TensorInfo {
        let ndim = (info.ndim.max(0) as usize).min(sys::TC_MAX_NDIM);
        TensorInfo { dtype: DataType(info.dtype), shape: info.shape[..ndim].to_vec() }
    }

    /// Number of elements (1 for a 0-d tensor).
    pub fn num_elements(&self) -> usize {
        self.shape.iter().map(|&n| n.max(0) as usize).product()
    }

    /// The shape as `usize`s, for [`TensorMut::new`].
    pub fn dims(&self) -> Vec<usize> {
        self.shape.iter().map(|&n| n.max(0) as usize).collect()
    }
}
