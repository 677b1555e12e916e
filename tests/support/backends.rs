//! The one list of backends that the tests, benches and examples (and the fuzz, interop,
//! peer-bench and embedded harnesses) iterate over, and its run-time view, [`Backends`]: which
//! backends of the list this process runs, and which it skips and why.
//!
//! Two forms of one list:
//! - `for_each_backend!(callback)` expands `callback!(ident, "name", constructor)` once per
//!   backend, as items or as statements. The constructor of a backend that needs an x86
//!   extension is `or_skip!`: on a CPU without the extension (or under the instruction-set cap)
//!   it *returns from the enclosing function*. Meant for item form, where every backend's tests
//!   are functions of their own (a per-backend `mod` of `#[test]`s).
//! - `for_each_backend!(callback, backends)` (statements): the same expansion for the backends
//!   that `backends` ([`Backends`]) runs, skipping the others without leaving the function. Use
//!   it wherever several backends run in one function (loops, dispatch by name).
//!
//! A skip is never silent and never hides a result:
//! - `or_skip!` fails (panics) when the constructor returns `None` although CPUID reports the
//!   extension and the cap allows it;
//! - every test binary that includes this file runs `support::backends::backends_run_here`,
//!   which prints the suite's one line `backends run: <n> (<names>); skipped: <m> (<reasons>)`
//!   to standard error directly (past the test harness's capture); harnesses without libtest
//!   (benches, examples, the fuzz driver, `ct_valgrind`) print it themselves with
//!   [`Backends::report`].
#![allow(dead_code, unused_macros, unused_imports)]

/// The list: `callback!(ident, "name", constructor)` per backend, in this order. Exported (as
/// `$crate::saber_backend_list!`) so that both forms of `for_each_backend!` expand it from any
/// module; use `for_each_backend!`.
#[doc(hidden)]
#[macro_export]
macro_rules! saber_backend_list {
    ($callback:ident) => {
        $callback!(schoolbook, "schoolbook", saber_kem::polymul::Schoolbook);
        $callback!(ntt, "ntt", saber_kem::polymul::Ntt::new());
        $callback!(ntt_scalar, "ntt-scalar", saber_kem::polymul::NttScalar);
        $callback!(ntt_merged, "ntt-merged", saber_kem::polymul::NttMerged);
        $callback!(
            ntt_lowstack,
            "ntt-lowstack",
            saber_kem::polymul::NttLowStack
        );
        // The portable kernels of the two above; on ARMv7-M those run assembly, and these the
        // Rust they are checked against.
        $callback!(
            ntt_merged_portable,
            "ntt-merged-portable",
            saber_kem::polymul::ntt::NttMergedPortable
        );
        $callback!(
            ntt_lowstack_portable,
            "ntt-lowstack-portable",
            saber_kem::polymul::ntt::NttLowStackPortable
        );
        $callback!(
            ntt_avx2,
            "ntt-avx2",
            $crate::or_skip!(saber_kem::polymul::NttAvx2::new(), "ntt-avx2", avx2)
        );
        $callback!(
            ntt_avx512,
            "ntt-avx512",
            $crate::or_skip!(
                saber_kem::polymul::ntt::NttAvx512::new(),
                "ntt-avx512",
                avx512
            )
        );
        $callback!(toom_cook, "toom-cook", saber_kem::polymul::ToomCook);
        $callback!(
            kronecker,
            "kronecker",
            saber_kem::polymul::KroneckerSoft::default()
        );
        // The ESP32 RSA driver on the host model of each register generation.
        $callback!(
            kronecker_esp32_model,
            "kronecker-esp32",
            saber_kem::hw::esp32_model::kronecker_on_model::<saber_kem::hw::esp32_rsa::Esp32>()
        );
        $callback!(
            kronecker_esp32s3_model,
            "kronecker-esp32s3",
            saber_kem::hw::esp32_model::kronecker_on_model::<saber_kem::hw::esp32_rsa::Esp32S3>()
        );
        $callback!(
            kronecker_esp32c3_model,
            "kronecker-esp32c3",
            saber_kem::hw::esp32_model::kronecker_on_model::<saber_kem::hw::esp32_rsa::Esp32C3>()
        );
        $callback!(karatsuba, "karatsuba", saber_kem::polymul::Karatsuba);
    };
}

/// The backend in `option` (the constructor of backend `name`, which needs the x86 extension
/// `avx2` or `avx512`), or a skip: returns from the enclosing function (a test or proptest body,
/// a closure) with "nothing ran" for its return type: `()`, `Result<(), E>` (`Ok`),
/// `Option<String>` (`Some(reason)`: how [`Backends::here`] learns the reason) or `ExitCode`
/// (failure, after printing the reason). Panics instead when the CPU has the extension within
/// the instruction-set cap: then `None` is a bug that a skip would hide.
#[doc(hidden)]
#[macro_export]
macro_rules! or_skip {
    ($option:expr, $name:literal, $extension:ident) => {
        match $option {
            Some(backend) => backend,
            None => {
                trait Skipped {
                    fn skipped(why: std::string::String) -> Self;
                }
                impl Skipped for () {
                    fn skipped(_: std::string::String) -> Self {}
                }
                impl<E> Skipped for Result<(), E> {
                    fn skipped(_: std::string::String) -> Self {
                        Ok(())
                    }
                }
                impl Skipped for Option<std::string::String> {
                    fn skipped(why: std::string::String) -> Self {
                        Some(why)
                    }
                }
                impl Skipped for std::process::ExitCode {
                    fn skipped(why: std::string::String) -> Self {
                        std::eprintln!("{}: not run here ({why})", $name);
                        std::process::ExitCode::FAILURE
                    }
                }
                return Skipped::skipped($crate::saber_missing_extension!($name, $extension));
            }
        }
    };
}

/// Why backend `$name` cannot run here (a `String` without commas), given that its constructor
/// returned `None`; panics if CPUID reports the extension and the cap allows it.
#[doc(hidden)]
#[macro_export]
macro_rules! saber_missing_extension {
    ($name:literal, avx2) => {
        $crate::saber_missing_extension!(@check $name, Avx2, "AVX2", "avx2")
    };
    ($name:literal, avx512) => {
        $crate::saber_missing_extension!(@check $name, Avx512, "AVX-512 F and BW", "avx512f", "avx512bw")
    };
    (@check $name:literal, $level:ident, $what:literal, $($feature:tt),+) => {{
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        let why = {
            let cpu = true $(&& std::is_x86_feature_detected!($feature))+;
            let cap = saber_kem::hazmat::isa_cap();
            assert!(
                !cpu || cap < saber_kem::hazmat::Isa::$level,
                "{}: the constructor returned None, but this CPU has {} and the instruction-set \
                 cap ({:?}) allows it; a skip would hide a result",
                $name,
                $what,
                cap
            );
            if cpu {
                std::format!("instruction-set cap {cap:?}")
            } else {
                std::format!("this CPU has no {}", $what)
            }
        };
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        let why = std::string::String::from("not an x86 CPU");
        why
    }};
}

/// `for_each_backend!(callback)`: every backend, as items or statements (a backend this machine
/// lacks returns from the enclosing function, see the module docs).
/// `for_each_backend!(callback, backends)`: statements, for the backends `backends` runs.
macro_rules! for_each_backend {
    ($callback:ident) => {
        $crate::saber_backend_list!($callback);
    };
    ($callback:ident, $backends:expr) => {{
        let running: &_ = &$backends;
        macro_rules! each_running_backend {
            ($id:ident, $name:expr, $ctor:expr) => {
                if running.runs($name) {
                    $callback! { $id, $name, $ctor }
                }
            };
        }
        $crate::saber_backend_list!(each_running_backend);
    }};
}

pub(crate) use for_each_backend;

/// The backends that implement `PolyMulPublic` (expanded keys), in the same callback form.
macro_rules! for_each_public_backend {
    ($callback:ident) => {
        $callback!(schoolbook, "schoolbook", saber_kem::polymul::Schoolbook);
        $callback!(ntt, "ntt", saber_kem::polymul::Ntt::new());
        $callback!(ntt_scalar, "ntt-scalar", saber_kem::polymul::NttScalar);
        $callback!(toom_cook, "toom-cook", saber_kem::polymul::ToomCook);
    };
}

pub(crate) use for_each_public_backend;

/// The run-time list: the backends of `for_each_backend!` this process runs, in list order, and
/// the ones it skips with the reason.
#[cfg(not(target_os = "none"))]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Backends {
    /// Names of the backends that run.
    pub run: Vec<&'static str>,
    /// Names of the backends that do not, with the reason.
    pub skipped: Vec<(&'static str, String)>,
}

#[cfg(not(target_os = "none"))]
impl Backends {
    /// The list on this CPU, within the instruction-set cap: each constructor is tried once.
    /// Panics where a skip would hide a result (see `or_skip!`).
    pub fn here() -> Self {
        let mut here = Self::default();
        macro_rules! probe {
            ($id:ident, $name:expr, $ctor:expr) => {
                let probe = || -> Option<String> {
                    let _backend = $ctor;
                    None
                };
                match probe() {
                    None => here.run.push($name),
                    Some(why) => here.skipped.push(($name, why)),
                }
            };
        }
        for_each_backend!(probe);
        here
    }

    /// Whether backend `name` runs.
    pub fn runs(&self, name: &str) -> bool {
        self.run.contains(&name)
    }

    /// Moves backend `name` from the run list to the skipped ones (a check that cannot run it
    /// here, such as Valgrind for AVX-512 code).
    pub fn skip(&mut self, name: &'static str, why: String) {
        if let Some(at) = self.run.iter().position(|&n| n == name) {
            self.run.remove(at);
            self.skipped.push((name, why));
        }
    }

    /// `backends run: <n> (<names>); skipped: <m> (<name: reason>, …)`: the summary line.
    pub fn line(&self) -> String {
        let skipped: Vec<String> = self
            .skipped
            .iter()
            .map(|(name, why)| format!("{name}: {why}"))
            .collect();
        format!(
            "backends run: {} ({}); skipped: {} ({})",
            self.run.len(),
            self.run.join(", "),
            self.skipped.len(),
            skipped.join(", ")
        )
    }

    /// Writes [`line`](Self::line) to standard error directly, so that it shows under the test
    /// harness's output capture too.
    pub fn report(&self) {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{}", self.line());
    }

    /// Fails unless `ran` is exactly the run list: a loop over the backends that stopped early
    /// (or ran one twice) would otherwise pass with fewer results.
    pub fn expect_ran(&self, ran: &[&str], what: &str) {
        assert_eq!(ran, self.run.as_slice(), "{what}: not every backend ran");
    }
}

/// The suite's summary line (once per test binary that includes this file).
#[cfg(test)]
#[test]
fn backends_run_here() {
    let here = Backends::here();
    here.report();
    assert_eq!(here.run.len() + here.skipped.len(), {
        let mut count = 0;
        macro_rules! count {
            ($id:ident, $name:expr, $ctor:expr) => {
                count += 1;
            };
        }
        for_each_backend!(count);
        count
    });
}
