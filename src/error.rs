//! Errors for bad input. Decoding never panics; a tampered ciphertext is not an error (it takes
//! the implicit-rejection path and yields a pseudorandom key).

use core::fmt;

/// Why a key or ciphertext encoding was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The input has the wrong number of bytes.
    InvalidLength {
        /// Bytes this parameter set requires.
        expected: usize,
        /// Bytes given.
        actual: usize,
    },
    /// A secret-key coefficient lies outside `[-μ/2, μ/2]`: no key generator produces it, and
    /// the fast backends' exactness bounds assume it.
    SecretOutOfRange,
    /// The hash of the public key stored in the secret key does not match the public key.
    PublicKeyHashMismatch,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidLength { expected, actual } => {
                write!(f, "invalid length: expected {expected} bytes, got {actual}")
            }
            Error::SecretOutOfRange => {
                f.write_str("malformed secret key: coefficient out of range")
            }
            Error::PublicKeyHashMismatch => {
                f.write_str("malformed secret key: public-key hash does not match")
            }
        }
    }
}

impl core::error::Error for Error {}

/// `Ok` if `bytes` has exactly `expected` bytes.
pub(crate) fn check_length(bytes: &[u8], expected: usize) -> Result<(), Error> {
    if bytes.len() == expected {
        Ok(())
    } else {
        Err(Error::InvalidLength {
            expected,
            actual: bytes.len(),
        })
    }
}
