//! Error: libtc's status and message as a Rust error. Built from the thread-local
//! `tc_last_error_message()` right after a failing call on the same thread; the binding itself
//! only adds errors for what C cannot receive (a NUL inside a string, a slice too short for
//! the shape it is given).
use std::ffi::CStr;
use std::fmt;
use std::os::raw::c_int;

use crate::sys;

/// A libtc status other than `TC_OK`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// NULL where a value is needed, bad count, unknown option, value or entry.
    InvalidArgument,
    /// The source does not parse.
    Syntax,
    /// Parses, but is not a valid TC (types, names, range inference).
    Semantic,
    /// Tensors do not match the def (rank, dtype, sizes, strides, overlap).
    Shape,
    /// Valid, but this backend or build cannot do it.
    Unsupported,
    /// The backend failed to compile the kernel.
    Compile,
    /// Execution failed (e.g. a gather index out of range).
    Runtime,
    /// The kernel cache failed.
    Cache,
    /// An allocation failed.
    NoMemory,
    /// A bug in libtc.
    Internal,
    /// A status this binding does not know (a newer libtc).
    Other(c_int),
}

impl Status {
    pub fn from_code(code: c_int) -> Status {
        match code {
            sys::TC_ERROR_INVALID_ARGUMENT => Status::InvalidArgument,
            sys::TC_ERROR_SYNTAX => Status::Syntax,
            sys::TC_ERROR_SEMANTIC => Status::Semantic,
            sys::TC_ERROR_SHAPE => Status::Shape,
            sys::TC_ERROR_UNSUPPORTED => Status::Unsupported,
            sys::TC_ERROR_COMPILE => Status::Compile,
            sys::TC_ERROR_RUNTIME => Status::Runtime,
            sys::TC_ERROR_CACHE => Status::Cache,
            sys::TC_ERROR_NO_MEMORY => Status::NoMemory,
            sys::TC_ERROR_INTERNAL => Status::Internal,
            other => Status::Other(other),
        }
    }

    /// The C status code (`TC_ERROR_*`).
    pub fn code(self) -> c_int {
        match self {
            Status::InvalidArgument => sys::TC_ERROR_INVALID_ARGUMENT,
            Status::Syntax => sys::TC_ERROR_SYNTAX,
            Status::Semantic => sys::TC_ERROR_SEMANTIC,
            Status::Shape => sys::TC_ERROR_SHAPE,
            Status::Unsupported => sys::TC_ERROR_UNSUPPORTED,
            Status::Compile => sys::TC_ERROR_COMPILE,
            Status::Runtime => sys::TC_ERROR_RUNTIME,
            Status::Cache => sys::TC_ERROR_CACHE,
            Status::NoMemory => sys::TC_ERROR_NO_MEMORY,
            Status::Internal => sys::TC_ERROR_INTERNAL,
            Status::Other(code) => code,
        }
    }
}

/// A failed libtc call: its status and libtc's full message (for source errors
/// `"<name>:<line>:<col>: error: ..."` followed by the source line and a caret).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
}

/// `Result<T, tc::Error>`.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into() }
    }

    pub fn status(&self) -> Status {
        self.status
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: tc_strerror returns a static string for any status.
        let name = unsafe { CStr::from_ptr(sys::tc_strerror(self.status.code())) };
        write!(f, "{}: {}", name.to_string_lossy(), self.message)
    }
}

impl std::error::Error for Error {}

/// `Ok(())` for TC_OK, else the error with this thread's last message.
pub(crate) fn check(status: c_int) -> Result<()> {
    if status == sys::TC_OK {
        return Ok(());
    }
    // SAFETY: never NULL; thread-local, and we are on the thread that made the failing call.
    let message = unsafe { CStr::from_ptr(sys::tc_last_error_message()) };
    Err(Error::new(Status::from_code(status), message.to_string_lossy().into_owned()))
}
