//! Regenerates NIST `.rsp` KAT files and checks them against the digests shipped in `kat/`.
//!
//! `kat/SHA256SUMS` holds the SHA-256 of each whole file; `kat/records/<file>.sha256` one digest
//! per record, so a mismatch names the first bad record even without the original files. When
//! `../shared/kat/` is present the report also names the first differing field.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use saber_kem::{
    Backend, Ciphertext, DecapsulationKey, EncapsulationKey, ExpandedDecapsulationKey,
    ParameterSet, PolyMulPublic, SaberKem, SharedSecret, Variant,
};
use sha2::{Digest, Sha256};

use super::drbg::{NistDrbg, kat_seeds};

/// Path of the KAT file for a parameter set, relative to `kat/` (and to `../shared/kat/`).
pub fn rsp_path<P: ParameterSet>() -> String {
    match P::NAME {
        "LightSaber" => "LightSaber/PQCkemKAT_1568.rsp".into(),
        "Saber" => "Saber/PQCkemKAT_2304.rsp".into(),
        "FireSaber" => "FireSaber/PQCkemKAT_3040.rsp".into(),
        "LightSaber-90s" => "LightSaber-90s/PQCkemKAT_1568.rsp".into(),
        "Saber-90s" => "Saber-90s/PQCkemKAT_2304.rsp".into(),
        "FireSaber-90s" => "FireSaber-90s/PQCkemKAT_3040.rsp".into(),
        "uLightSaber" => "uLightSaber/PQCkemKAT_1504.rsp".into(),
        "uSaber" => "uSaber/PQCkemKAT_2208.rsp".into(),
        "uFireSaber" => "uFireSaber/PQCkemKAT_2912.rsp".into(),
        "uLightSaber-90s" => "uLightSaber-90s/PQCkemKAT_1504.rsp".into(),
        "uSaber-90s" => "uSaber-90s/PQCkemKAT_2208.rsp".into(),
        "uFireSaber-90s" => "uFireSaber-90s/PQCkemKAT_2912.rsp".into(),
        "LightSaber+" => "SaberPlus/PQCkemKAT_SaberPlus_L2.rsp".into(),
        "Saber+" => "SaberPlus/PQCkemKAT_SaberPlus_L3.rsp".into(),
        "FireSaber+" => "SaberPlus/PQCkemKAT_SaberPlus_L4.rsp".into(),
        other => panic!("no KAT file for {other}"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// One record exactly as `PQCgenKAT_kem.c` prints it (including the blank line after it), and
/// a check that decapsulation recovers the secret.
pub fn record<V: Variant, B: Backend, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    count: usize,
    seed: &[u8; 48],
) -> String
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let mut rng = NistDrbg::new(seed);
    let (dk, ek) = SaberKem::<V, L, MU, ET>::try_generate_with(backend, &mut rng).unwrap();
    let mut m = [0u8; 32];
    rng.randombytes(&mut m);
    let (ct, ss) = ek.encapsulate_deterministic_with(backend, &m);
    let recovered = dk.decapsulate_with(backend, &ct);
    assert_eq!(recovered, ss, "decapsulation failed at count {count}");
    format_record(count, seed, &ek, &dk, &ct, &ss)
}

/// One record with encapsulation and decapsulation through the expanded keys.
pub fn record_expanded<
    V: Variant,
    B: PolyMulPublic,
    const L: usize,
    const MU: usize,
    const ET: usize,
>(
    backend: &mut B,
    count: usize,
    seed: &[u8; 48],
) -> String
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let mut rng = NistDrbg::new(seed);
    let (dk, ek) = SaberKem::<V, L, MU, ET>::try_generate_with(backend, &mut rng).unwrap();
    let mut m = [0u8; 32];
    rng.randombytes(&mut m);
    let expanded = ExpandedDecapsulationKey::new(backend, &dk);
    let (ct, ss) = expanded
        .expanded_encapsulation_key()
        .encapsulate_deterministic(backend, &m);
    assert_eq!(
        expanded.decapsulate(backend, &ct),
        ss,
        "expanded decapsulation failed at count {count}"
    );
    format_record(count, seed, &ek, &dk, &ct, &ss)
}

pub fn format_record<P: ParameterSet>(
    count: usize,
    seed: &[u8; 48],
    ek: &EncapsulationKey<P>,
    dk: &DecapsulationKey<P>,
    ct: &Ciphertext<P>,
    ss: &SharedSecret,
) -> String {
    format!(
        "count = {count}\nseed = {}\npk = {}\nsk = {}\nct = {}\nss = {}\n\n",
        hex(seed),
        hex(ek.as_bytes()),
        hex(dk.to_bytes().as_ref()),
        hex(ct.as_bytes()),
        hex(ss.as_bytes())
    )
}

/// The whole `.rsp` text for a parameter set, as records (the header is `# NAME\n\n`).
pub fn records<V: Variant, B: Backend, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
) -> Vec<String>
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    each_record(|count, seed| record::<V, B, L, MU, ET>(backend, count, seed))
}

/// The 100 records, `record(count, seed)` for each official KAT seed in order.
pub fn each_record(mut record: impl FnMut(usize, &[u8; 48]) -> String) -> Vec<String> {
    kat_seeds()
        .iter()
        .enumerate()
        .map(|(count, seed)| record(count, seed))
        .collect()
}

/// [`records`] through the expanded keys.
pub fn records_expanded<
    V: Variant,
    B: PolyMulPublic,
    const L: usize,
    const MU: usize,
    const ET: usize,
>(
    backend: &mut B,
) -> Vec<String>
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    each_record(|count, seed| record_expanded::<V, B, L, MU, ET>(backend, count, seed))
}

/// `# NAME\n\n` followed by the records.
pub fn rsp_text(name: &str, records: &[String]) -> String {
    let mut text = format!("# {name}\n\n");
    for r in records {
        text.push_str(r);
    }
    text
}

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Expected SHA-256 of a whole file, from `kat/SHA256SUMS`.
fn expected_file_digest(rsp: &str) -> String {
    let sums = std::fs::read_to_string(repo_path("kat/SHA256SUMS")).expect("kat/SHA256SUMS");
    sums.lines()
        .find_map(|l| {
            let (digest, name) = l.split_once("  ")?;
            (name == rsp).then(|| digest.to_string())
        })
        .unwrap_or_else(|| panic!("{rsp} missing from kat/SHA256SUMS"))
}

/// Per-record digests file for `rsp`.
pub fn record_digests_path(rsp: &str) -> PathBuf {
    repo_path(&format!("kat/records/{}.sha256", rsp.replace('/', "_")))
}

/// One SHA-256 per record, in order.
pub fn record_digests(records: &[String]) -> String {
    records
        .iter()
        .map(|r| sha256_hex(r.as_bytes()) + "\n")
        .collect()
}

/// Compares regenerated text with the shipped digests; on mismatch, panics with the first bad
/// record (and field, when `../shared/kat` is available).
pub fn check<P: ParameterSet>(backend_name: &str, records: &[String]) {
    let rsp = rsp_path::<P>();
    let text = rsp_text(P::NAME, records);
    if sha256_hex(text.as_bytes()) == expected_file_digest(&rsp) {
        return;
    }
    let mut report = format!("{} KAT mismatch with backend {backend_name}", P::NAME);
    let shipped = std::fs::read_to_string(record_digests_path(&rsp)).unwrap_or_default();
    let first_bad = records
        .iter()
        .zip(shipped.lines())
        .position(|(r, d)| sha256_hex(r.as_bytes()) != d);
    if let Some(count) = first_bad {
        let _ = write!(report, "; first differing record: count = {count}");
    }
    let original = repo_path("..").join("shared/kat").join(&rsp);
    if let Ok(original) = std::fs::read_to_string(original) {
        let want = original.lines().skip(2);
        let got = text.lines().skip(2);
        if let Some((w, g)) = want.zip(got).find(|(w, g)| w != g) {
            let field = w.split(" = ").next().unwrap_or("?");
            let _ = write!(
                report,
                "; first differing field `{field}`:\n  want {w:.120}\n  got  {g:.120}"
            );
        }
    }
    panic!("{report}");
}
