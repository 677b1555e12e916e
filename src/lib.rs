#![no_std]
#![doc = "saber-kem"]

pub mod hw;
pub mod poly;
pub mod polymul;
