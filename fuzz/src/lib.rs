//! The logic of the fuzz targets, shared by the cargo-fuzz binaries (`fuzz_targets/`) and the
//! libFuzzer-free driver (`src/bin/drive.rs`). Every function accepts any byte string and panics
//! only on a real finding. See `README.md`.

use saber_kem::polymul::{DefaultPolyMul, N, Poly, PolyMul, Q_MASK, Schoolbook, SecretPoly};
use saber_kem::{
    ByteArray, Ciphertext, DecapsulationKey, EncapsulationKey, Error, ParameterSet, Plus, Round3,
    SaberKem, Variant,
};
use sha3::{Digest, Sha3_256, Sha3_512};

/// SHA3-256 of the concatenation of `parts` (the `sha3` crate: independent of the library).
fn sha3_256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha3_256::new();
    parts.iter().for_each(|p| h.update(p));
    h.finalize().into()
}

/// SHA3-512 of the concatenation of `parts`.
fn sha3_512(parts: &[&[u8]]) -> [u8; 64] {
    let mut h = Sha3_512::new();
    parts.iter().for_each(|p| h.update(p));
    h.finalize().into()
}

/// The project's backend list (`tests/support/backends.rs`).
#[path = "../../tests/support/backends.rs"]
pub mod backends;

/// The backends this process runs (each constructor tried once per process, not per input).
pub fn backends() -> &'static backends::Backends {
    static HERE: std::sync::OnceLock<backends::Backends> = std::sync::OnceLock::new();
    HERE.get_or_init(backends::Backends::here)
}

/// Input bytes consumed front to back; zeros once exhausted.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn byte(&mut self) -> u8 {
        let (first, rest) = self.0.split_first().map_or((0, &[][..]), |(f, r)| (*f, r));
        self.0 = rest;
        first
    }

    /// Up to `len` bytes (fewer if the input runs out).
    fn take(&mut self, len: usize) -> &'a [u8] {
        let (head, tail) = self.0.split_at(len.min(self.0.len()));
        self.0 = tail;
        head
    }

    /// Exactly `len` bytes, zero-padded.
    fn fill(&mut self, out: &mut [u8]) {
        let head = self.take(out.len());
        out[..head.len()].copy_from_slice(head);
    }

    fn array<const LEN: usize>(&mut self) -> [u8; LEN] {
        let mut out = [0; LEN];
        self.fill(&mut out);
        out
    }

    fn rest(&mut self) -> &'a [u8] {
        self.take(self.0.len())
    }
}

/// Calls `$run::<V, L, MU, ET>($($arg),*)` for the parameter set chosen by `$selector`.
macro_rules! dispatch_set {
    ($selector:expr, $run:ident ( $($arg:expr),* )) => {
        match $selector % 6 {
            0 => $run::<Round3, 2, 10, 3>($($arg),*),
            1 => $run::<Round3, 3, 8, 4>($($arg),*),
            2 => $run::<Round3, 4, 6, 6>($($arg),*),
            3 => $run::<Plus, 2, 10, 3>($($arg),*),
            4 => $run::<Plus, 3, 8, 4>($($arg),*),
            _ => $run::<Plus, 4, 6, 6>($($arg),*),
        }
    };
}

fn len_of<A: ByteArray>() -> usize {
    A::ZERO.as_ref().len()
}

/// Bytes of the public key and of the IND-CPA secret key of `P` (the NIST layout:
/// sk = sk_cpa ‖ pk ‖ H(pk) ‖ z).
fn key_lengths<P: ParameterSet>() -> (usize, usize) {
    let pk = len_of::<P::PublicKeyBytes>();
    (pk, len_of::<P::SecretKeyBytes>() - pk - 64)
}

/// FO decapsulation written out plainly from the spec (round-3 §2.6, Algorithm 6) on top of the
/// crate's IND-CPA scheme (`hazmat`) and the `sha3` crate, with an ordinary `if` for the
/// selection: the oracle for the key the library must return. `sk` must be well formed.
fn reference_decapsulate<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    sk: &[u8],
    ct: &[u8],
) -> [u8; 32]
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    type K<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
    let (pk_len, cpa) = key_lengths::<K<V, L, MU, ET>>();
    let (sk_cpa, rest) = sk.split_at(cpa);
    let (pk, rest) = rest.split_at(pk_len);
    let (hpk, z) = rest.split_at(32);
    let mut backend = DefaultPolyMul::default();
    let m = K::<V, L, MU, ET>::pke_decrypt(&mut backend, sk_cpa, ct).expect("lengths");
    let kr = sha3_512(&[&m, hpk]);
    let mut coins = [0u8; 32];
    coins.copy_from_slice(&kr[32..]);
    let mut reencrypted = vec![0u8; ct.len()];
    K::<V, L, MU, ET>::pke_encrypt(&mut backend, pk, &m, &coins, &mut reencrypted)
        .expect("lengths");
    let k = if reencrypted == ct { &kr[..32] } else { z };
    sha3_256(&[k, &sha3_256(&[ct])])
}

/// Decapsulates `ct` with every backend (and through the slice API) and checks each result
/// against the reference, or the typed error for a wrong length.
fn check_decapsulation<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    dk: &DecapsulationKey<SaberKem<V, L, MU, ET>>,
    ct: &[u8],
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    type K<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
    let ct_len = len_of::<<K<V, L, MU, ET> as ParameterSet>::CiphertextBytes>();
    let Ok(ciphertext) = Ciphertext::<K<V, L, MU, ET>>::from_bytes(ct) else {
        assert_ne!(ct.len(), ct_len);
        assert_eq!(
            dk.decapsulate_slice(ct).err(),
            Some(Error::InvalidLength {
                expected: ct_len,
                actual: ct.len()
            })
        );
        return;
    };
    let want = reference_decapsulate::<V, L, MU, ET>(dk.to_bytes().as_ref(), ct);
    macro_rules! each_backend {
        ($id:ident, $name:expr, $ctor:expr) => {
            let got = dk.decapsulate_with(&mut $ctor, &ciphertext);
            assert_eq!(got.as_bytes(), &want, "backend {}", $name);
        };
    }
    backends::for_each_backend!(each_backend, backends());
}

/// Overwrites the H(pk) field of a secret key with the hash of its pk field.
fn repair_public_key_hash<P: ParameterSet>(sk: &mut [u8]) {
    let (pk_len, start) = key_lengths::<P>();
    let end = start + pk_len;
    let hash = sha3_256(&[&sk[start..end]]);
    sk[end..end + 32].copy_from_slice(&hash);
}

/// A well-formed secret key whose secret coefficients, public key and z come from the input:
/// keys no key generator would produce (s unrelated to pk) but that decoding must accept. The
/// secret is coded here independently: two's complement with the set's width (13 bits for
/// round 3, 4 for Saber+), least significant bit first.
fn key_from_input<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    input: &mut Reader<'_>,
) -> Vec<u8>
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let (pk_len, cpa) = key_lengths::<SaberKem<V, L, MU, ET>>();
    let bits = (cpa * 8) / (L * N);
    let mut sk = vec![0u8; cpa + pk_len + 64];
    let (sk_cpa, rest) = sk.split_at_mut(cpa);
    for k in 0..L * N {
        // Any value in [-μ/2, μ/2].
        let c = (usize::from(input.byte()) % (MU + 1)) as i32 - (MU / 2) as i32;
        let field = (c as u32) & ((1 << bits) - 1);
        for b in 0..bits {
            let at = k * bits + b;
            sk_cpa[at / 8] |= (((field >> b) & 1) as u8) << (at % 8);
        }
    }
    let (pk, rest) = rest.split_at_mut(pk_len);
    input.fill(pk);
    let (hpk, z) = rest.split_at_mut(32);
    hpk.copy_from_slice(&sha3_256(&[pk]));
    input.fill(z);
    sk
}

fn decapsulate_set<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    mode: u8,
    input: &mut Reader<'_>,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    type K<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
    let sk_len = len_of::<<K<V, L, MU, ET> as ParameterSet>::SecretKeyBytes>();
    match mode & 3 {
        // Raw secret-key bytes (zero-padded to the right length, with H(pk) repaired so that
        // the range check decides): decoding must reject or accept without panicking.
        0 => {
            let mut sk = vec![0u8; sk_len];
            input.fill(&mut sk);
            repair_public_key_hash::<K<V, L, MU, ET>>(&mut sk);
            if let Ok(dk) = DecapsulationKey::<K<V, L, MU, ET>>::from_bytes(&sk) {
                assert_eq!(dk.to_bytes().as_ref(), sk.as_slice());
                check_decapsulation(&dk, input.rest());
            }
        }
        // Arbitrary well-formed keys, arbitrary ciphertexts.
        1 => {
            let sk = key_from_input::<V, L, MU, ET>(input);
            let dk = DecapsulationKey::<K<V, L, MU, ET>>::from_bytes(&sk)
                .expect("a well-formed secret key was rejected");
            check_decapsulation(&dk, input.rest());
        }
        // Generated keys; an arbitrary ciphertext, or a valid one with input bytes XORed in
        // (the interesting boundary of implicit rejection).
        _ => {
            let mut backend = DefaultPolyMul::default();
            let (seed_a, seed_s, z) = (input.array(), input.array(), input.array());
            let (dk, ek) =
                K::<V, L, MU, ET>::generate_deterministic_with(&mut backend, &seed_a, &seed_s, &z);
            if mode & 3 == 2 {
                check_decapsulation(&dk, input.rest());
                return;
            }
            let (ct, ss) = ek.encapsulate_deterministic_with(&mut backend, &input.array());
            let mut bytes = ct.as_bytes().to_vec();
            let delta = input.rest();
            for (b, d) in bytes.iter_mut().zip(delta) {
                *b ^= d;
            }
            if delta.iter().all(|&d| d == 0) {
                assert!(dk.decapsulate_with(&mut backend, &ct) == ss);
            }
            check_decapsulation(&dk, &bytes);
        }
    }
}

/// Target `decapsulate`: decapsulation with arbitrary ciphertext and secret-key bytes, checked
/// against a plainly written FO decapsulation on every backend.
pub fn decapsulate(data: &[u8]) {
    let mut input = Reader(data);
    let selector = input.byte();
    let mode = input.byte();
    dispatch_set!(selector, decapsulate_set(mode, &mut input));
}

fn decode_set<V: Variant, const L: usize, const MU: usize, const ET: usize>(shape: u8, input: &[u8])
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    type K<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
    let pk_len = len_of::<<K<V, L, MU, ET> as ParameterSet>::PublicKeyBytes>();
    let sk_len = len_of::<<K<V, L, MU, ET> as ParameterSet>::SecretKeyBytes>();
    let ct_len = len_of::<<K<V, L, MU, ET> as ParameterSet>::CiphertextBytes>();
    let (_, cpa) = key_lengths::<K<V, L, MU, ET>>();
    // Mutation rarely hits an exact length: `shape` pads or truncates the input to one.
    let mut owned = input.to_vec();
    match shape & 3 {
        0 => {}
        1 => owned.resize(pk_len, 0),
        2 => owned.resize(ct_len, 0),
        _ => {
            owned.resize(sk_len, 0);
            if shape & 4 != 0 {
                repair_public_key_hash::<K<V, L, MU, ET>>(&mut owned);
            }
        }
    }
    let bytes = owned.as_slice();

    match EncapsulationKey::<K<V, L, MU, ET>>::from_bytes(bytes) {
        Ok(ek) => assert_eq!(ek.as_bytes(), bytes),
        Err(e) => assert_ne!(bytes.len(), pk_len, "{e}"),
    }
    match Ciphertext::<K<V, L, MU, ET>>::from_bytes(bytes) {
        Ok(ct) => assert_eq!(ct.as_bytes(), bytes),
        Err(e) => assert_ne!(bytes.len(), ct_len, "{e}"),
    }
    match DecapsulationKey::<K<V, L, MU, ET>>::from_bytes(bytes) {
        Ok(dk) => {
            assert_eq!(dk.to_bytes().as_ref(), bytes);
            assert_eq!(dk.encapsulation_key().as_bytes(), &bytes[cpa..cpa + pk_len]);
            assert_eq!(
                sha3_256(&[&bytes[cpa..cpa + pk_len]]),
                bytes[cpa + pk_len..cpa + pk_len + 32]
            );
        }
        Err(Error::InvalidLength { expected, actual }) => {
            assert_eq!((expected, actual), (sk_len, bytes.len()));
        }
        Err(Error::SecretOutOfRange | Error::PublicKeyHashMismatch) => {
            assert_eq!(bytes.len(), sk_len);
        }
        Err(e) => panic!("unexpected error {e}"),
    }
}

/// Target `decode`: key and ciphertext decoding of arbitrary bytes for every parameter set:
/// typed errors, exact round trips, and acceptance only of well-formed keys. Input: set
/// selector, shape (raw length, or padded to the pk/ct/sk length, optionally with H(pk)
/// repaired), bytes.
pub fn decode(data: &[u8]) {
    let mut input = Reader(data);
    let selector = input.byte();
    let shape = input.byte();
    let bytes = input.rest();
    dispatch_set!(selector, decode_set(shape, bytes));
}

/// Target `polymul_differential`: Σ a_k·s_k (1 to 4 terms) on every backend against the
/// schoolbook oracle, for arbitrary 16-bit public coefficients and secrets in [-5, 5].
pub fn polymul_differential(data: &[u8]) {
    let mut input = Reader(data);
    let terms = 1 + usize::from(input.byte() & 3);
    let mut pairs = Vec::with_capacity(terms);
    for _ in 0..terms {
        let mut a = Poly::ZERO;
        for c in a.coeffs.iter_mut() {
            *c = u16::from_le_bytes([input.byte(), input.byte()]);
        }
        let mut s = SecretPoly::ZERO;
        for c in s.coeffs.iter_mut() {
            *c = (input.byte() % 11) as i8 - 5;
        }
        pairs.push((a, s));
    }
    let want = sum_of_products(&mut Schoolbook, &pairs);
    macro_rules! each_backend {
        ($id:ident, $name:expr, $ctor:expr) => {
            let got = sum_of_products(&mut $ctor, &pairs);
            assert_eq!(got, want, "backend {}", $name);
        };
    }
    backends::for_each_backend!(each_backend, backends());
}

fn sum_of_products<B: PolyMul>(backend: &mut B, pairs: &[(Poly, SecretPoly)]) -> [u16; N] {
    let mut acc = backend.accumulator();
    for (a, s) in pairs {
        let prepared = backend.prepare(s);
        backend.mul_acc(&mut acc, a, &prepared);
    }
    backend.finish(&acc).coeffs.map(|c| c & Q_MASK)
}

/// A fuzz target: any byte string in, a panic on a finding.
pub type Target = fn(&[u8]);

/// Every target by name, for the driver.
pub const TARGETS: [(&str, Target); 3] = [
    ("decapsulate", decapsulate),
    ("decode", decode),
    ("polymul_differential", polymul_differential),
];
