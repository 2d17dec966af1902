//! build.rs — tells rustc where libtc is. TC_LIB_DIR (a directory holding libtc.so) wins;
//! otherwise `pkg-config --variable=libdir tc` (so PKG_CONFIG_PATH selects an install prefix);
//! otherwise only `-ltc`, which finds a libtc installed in the linker's default directories.
//! This crate's integration tests get an rpath to that directory so they run without
//! LD_LIBRARY_PATH (doctests need it); programs that depend on the crate need the library on the loader's
//! path at run time (or their own rpath: DEP_TC_LIBDIR holds the directory for their build.rs).
use std::env;
use std::process::Command;

fn pkg_config_libdir() -> Option<String> {
    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let out = Command::new(pkg_config).args(["--variable=libdir", "tc"]).output().ok()?;
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && !dir.is_empty() {
        Some(dir)
    } else {
        None
    }
}

fn main() {
    for var in ["TC_LIB_DIR", "PKG_CONFIG_PATH", "PKG_CONFIG"] {
        println!("cargo:rerun-if-env-changed={}", var);
    }
    println!("cargo:rerun-if-changed=build.rs");
    let dir = match env::var("TC_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => Some(dir),
        _ => pkg_config_libdir(),
    };
    match dir {
        Some(dir) => {
            println!("cargo:rustc-link-search=native={}", dir);
            println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{}", dir);
            println!("cargo:libdir={}", dir);
        }
        None => println!(
            "cargo:warning=libtc not found via TC_LIB_DIR or pkg-config; linking with -ltc from the default directories"
        ),
    }
    println!("cargo:rustc-link-lib=dylib=tc");
}
