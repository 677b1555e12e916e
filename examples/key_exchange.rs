//! Alice and Bob agree on a 32-byte secret with Saber.
//!
//! `cargo run --example key_exchange`

use saber_kem::{Ciphertext, DecapsulationKey, EncapsulationKey, Saber};

fn main() -> Result<(), saber_kem::Error> {
    let mut rng = rand_core::UnwrapErr(getrandom::SysRng);

    // Alice makes a key pair and publishes the encapsulation key (992 bytes).
    let (alice_secret, alice_public) = Saber::generate(&mut rng);
    let published: Vec<u8> = alice_public.as_bytes().to_vec();

    // Bob decodes it, encapsulates a fresh secret and sends the ciphertext (1088 bytes).
    let alice_public = EncapsulationKey::<Saber>::from_bytes(&published)?;
    let (ciphertext, bob_shared) = alice_public.encapsulate(&mut rng);
    let sent: Vec<u8> = ciphertext.as_bytes().to_vec();

    // Alice keeps her key as its 96-byte seed (the compact form) and rebuilds it when needed.
    let stored = alice_secret
        .to_seed()
        .expect("generated keys keep their seed");
    let alice_secret = DecapsulationKey::<Saber>::from_seed(&stored);

    // Alice decapsulates and holds the same secret.
    let alice_shared = alice_secret.decapsulate(&Ciphertext::from_bytes(&sent)?);
    assert_eq!(alice_shared, bob_shared);
    println!(
        "shared secret agreed ({} bytes); public key {} bytes, ciphertext {} bytes",
        alice_shared.as_bytes().len(),
        published.len(),
        sent.len()
    );
    Ok(())
}
