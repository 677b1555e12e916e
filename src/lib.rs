#![no_std]
#![doc = "saber-kem"]

pub mod poly;
pub mod polymul;
