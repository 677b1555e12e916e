//! The NIST AES-256 CTR_DRBG of the round-3 KAT generator (`rng.c`), as a rand_core 0.10 RNG.
//!
//! Each `fill_bytes` call is one `randombytes` call: output blocks, then an Update with no input.
//! Call sizes therefore matter, and the KEM draws 32 bytes per call in the reference order.

use aes::Aes256;
use aes::cipher::{BlockCipherEncrypt, KeyInit};
use core::convert::Infallible;
use rand_core::{TryCryptoRng, TryRng};

/// NIST SP 800-90A CTR_DRBG with AES-256, no derivation function, no reseeding.
pub struct NistDrbg {
    key: [u8; 32],
    v: [u8; 16],
}

impl NistDrbg {
    /// `randombytes_init(entropy, NULL, 256)`.
    pub fn new(entropy: &[u8; 48]) -> Self {
        let mut drbg = Self {
            key: [0; 32],
            v: [0; 16],
        };
        drbg.update(Some(entropy));
        drbg
    }

    fn increment_v(&mut self) {
        for byte in self.v.iter_mut().rev() {
            *byte = byte.wrapping_add(1);
            if *byte != 0 {
                break;
            }
        }
    }

    fn next_block(&mut self) -> [u8; 16] {
        self.increment_v();
        let cipher = Aes256::new(&self.key.into());
        let mut block = self.v.into();
        cipher.encrypt_block(&mut block);
        block.into()
    }

    fn update(&mut self, provided: Option<&[u8; 48]>) {
        let mut temp = [0u8; 48];
        for chunk in temp.chunks_exact_mut(16) {
            chunk.copy_from_slice(&self.next_block());
        }
        if let Some(p) = provided {
            for (t, x) in temp.iter_mut().zip(p.iter()) {
                *t ^= x;
            }
        }
        self.key.copy_from_slice(&temp[..32]);
        self.v.copy_from_slice(&temp[32..]);
    }

    /// `randombytes(out, out.len())`.
    pub fn randombytes(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(16) {
            let block = self.next_block();
            chunk.copy_from_slice(&block[..chunk.len()]);
        }
        self.update(None);
    }
}

impl TryRng for NistDrbg {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        let mut b = [0u8; 4];
        self.randombytes(&mut b);
        Ok(u32::from_le_bytes(b))
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let mut b = [0u8; 8];
        self.randombytes(&mut b);
        Ok(u64::from_le_bytes(b))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.randombytes(dst);
        Ok(())
    }
}

impl TryCryptoRng for NistDrbg {}

/// The 100 per-record seeds of `PQCgenKAT_kem.c`: a master DRBG seeded with bytes 0..47.
pub fn kat_seeds() -> Vec<[u8; 48]> {
    let entropy: [u8; 48] = core::array::from_fn(|i| i as u8);
    let mut master = NistDrbg::new(&entropy);
    (0..100)
        .map(|_| {
            let mut seed = [0u8; 48];
            master.randombytes(&mut seed);
            seed
        })
        .collect()
}
