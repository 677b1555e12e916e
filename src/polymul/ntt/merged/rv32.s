# RV32IM kernels of the merged-layer NTT (src/polymul/ntt/merged.rs; portable reference
# src/polymul/ntt/merged/portable.rs). The transforms compute the portable kernels' values bit
# for bit; the base products reduce each term (Montgomery, R = 2^32) instead of each 64-bit sum
# (no 64-bit accumulator on RV32), so their NTT-domain values are congruent, not equal (bounds
# in rv32.rs). ILP32 calling convention: arguments in a0–a3, s0–s11 and ra preserved.
#
# Register roles in the transform passes: x0–x7 = a3–a7, t0–t2; the seven twiddles of a merged
# group in s0–s11, t3, t4 as (ω, ⌊ω·2^32/q'⌉) pairs; q' in t5; scratch t6, ra.

    # The target has M (the cfg checks it), but module-level assembly is assembled without the
    # target's extensions.
    .option push
    .option arch, +m

    .equ Q, 41944577
    .equ HALF_Q, 20972288
    .equ QINV, 0x25a3fa01

.macro save
    addi sp, sp, -64
    sw ra, 60(sp)
    sw s0, 56(sp)
    sw s1, 52(sp)
    sw s2, 48(sp)
    sw s3, 44(sp)
    sw s4, 40(sp)
    sw s5, 36(sp)
    sw s6, 32(sp)
    sw s7, 28(sp)
    sw s8, 24(sp)
    sw s9, 20(sp)
    sw s10, 16(sp)
    sw s11, 12(sp)
.endm

.macro restore
    lw ra, 60(sp)
    lw s0, 56(sp)
    lw s1, 52(sp)
    lw s2, 48(sp)
    lw s3, 44(sp)
    lw s4, 40(sp)
    lw s5, 36(sp)
    lw s6, 32(sp)
    lw s7, 28(sp)
    lw s8, 24(sp)
    lw s9, 20(sp)
    lw s10, 16(sp)
    lw s11, 12(sp)
    addi sp, sp, 64
.endm

.macro entry name
    .section .text.\name,"ax",@progbits
    .globl \name
    .type \name,@function
    .p2align 2
\name:
.endm

# The seven twiddles at \src + 0..56 into s0–s11, t3, t4.
.macro load_twiddles src
    lw s0, 0(\src)
    lw s1, 4(\src)
    lw s2, 8(\src)
    lw s3, 12(\src)
    lw s4, 16(\src)
    lw s5, 20(\src)
    lw s6, 24(\src)
    lw s7, 28(\src)
    lw s8, 32(\src)
    lw s9, 36(\src)
    lw s10, 40(\src)
    lw s11, 44(\src)
    lw t3, 48(\src)
    lw t4, 52(\src)
.endm

# \out = \x·ω mod q' = \x·ω − q'·⌊\x·ω'/2^32⌋ (Shoup); \out may be \x.
.macro mulc out, x, w, wq
    mulh t6, \x, \wq
    mul \out, \x, \w
    mul t6, t6, t5
    sub \out, \out, t6
.endm

# Cooley–Tukey: (xi, xj) = (xi + xj·ω, xi − xj·ω).
.macro ct xi, xj, w, wq
    mulc ra, \xj, \w, \wq
    sub \xj, \xi, ra
    add \xi, \xi, ra
.endm

# Cooley–Tukey with an exact product, for |xj| <= 5 (a secret's first layer: |xj·ω| <= 5·q'/2
# < 2^31, no reduction needed).
.macro ct_small xi, xj, w
    mul ra, \xj, \w
    sub \xj, \xi, ra
    add \xi, \xi, ra
.endm

# Gentleman–Sande: (xi, xj) = (xi + xj, (xi − xj)·ω).
.macro gs xi, xj, w, wq
    sub ra, \xi, \xj
    add \xi, \xi, \xj
    mulc \xj, ra, \w, \wq
.endm

# Three Cooley–Tukey layers; with \small, inputs of a secret (|x| <= 5), whose first layer's
# products are exact.
.macro forward_three small=0
    .if \small
    ct_small a3, a7, s0
    ct_small a4, t0, s0
    ct_small a5, t1, s0
    ct_small a6, t2, s0
    .else
    ct a3, a7, s0, s1
    ct a4, t0, s0, s1
    ct a5, t1, s0, s1
    ct a6, t2, s0, s1
    .endif
    ct a3, a5, s2, s3
    ct a4, a6, s2, s3
    ct a7, t1, s4, s5
    ct t0, t2, s4, s5
    ct a3, a4, s6, s7
    ct a5, a6, s8, s9
    ct a7, t0, s10, s11
    ct t1, t2, t3, t4
.endm

# Two Gentleman–Sande layers, then the sums and differences of the third, the differences
# multiplied by the last twiddle (t3, t4).
.macro inverse_three_unscaled
    gs a3, a4, s0, s1
    gs a5, a6, s2, s3
    gs a7, t0, s4, s5
    gs t1, t2, s6, s7
    gs a3, a5, s8, s9
    gs a4, a6, s8, s9
    gs a7, t1, s10, s11
    gs t0, t2, s10, s11
    gs a3, a7, t3, t4
    gs a4, t0, t3, t4
    gs a5, t1, t3, t4
    gs a6, t2, t3, t4
.endm

.macro load_column base, stride, op
    \op a3, (0 * \stride)(\base)
    \op a4, (1 * \stride)(\base)
    \op a5, (2 * \stride)(\base)
    \op a6, (3 * \stride)(\base)
    \op a7, (4 * \stride)(\base)
    \op t0, (5 * \stride)(\base)
    \op t1, (6 * \stride)(\base)
    \op t2, (7 * \stride)(\base)
.endm

.macro store_column base, stride
    sw a3, (0 * \stride)(\base)
    sw a4, (1 * \stride)(\base)
    sw a5, (2 * \stride)(\base)
    sw a6, (3 * \stride)(\base)
    sw a7, (4 * \stride)(\base)
    sw t0, (5 * \stride)(\base)
    sw t1, (6 * \stride)(\base)
    sw t2, (7 * \stride)(\base)
.endm

.macro sext13 x
    slli \x, \x, 19
    srai \x, \x, 19
.endm

# fwd_first(input, out, twiddles): layers 1–3, 32 columns at stride 32; \extend: 13-bit
# residues, centred first (else a secret, |s| <= 5, whose first layer is exact).
.macro fwd_first name, load, step, extend
    entry \name
    save
    load_twiddles a2
    li t5, Q
    addi a2, a1, 128
1:
    load_column a0, \step, \load
    .if \extend
    sext13 a3
    sext13 a4
    sext13 a5
    sext13 a6
    sext13 a7
    sext13 t0
    sext13 t1
    sext13 t2
    forward_three
    .else
    forward_three 1
    .endif
    store_column a1, 128
    addi a0, a0, (\step / 32)
    addi a1, a1, 4
    bne a1, a2, 1b
    restore
    ret
    .size \name, . - \name
.endm

    fwd_first saber_kem_merged_fwd_first_u13, lhu, 64, 1
    fwd_first saber_kem_merged_fwd_first_s8, lb, 32, 0

# fwd_last(groups, count, twiddles): layers 4–6 in place in `count` groups of 32, group g with
# the seven twiddles at twiddles + 56·g.
    entry saber_kem_merged_fwd_last
    save
    slli a1, a1, 7
    add a1, a1, a0
    li t5, Q
2:
    load_twiddles a2
    addi a2, a2, 56
    .rept 4
    load_column a0, 16, lw
    forward_three
    store_column a0, 16
    addi a0, a0, 4
    .endr
    addi a0, a0, 112
    bne a0, a1, 2b
    restore
    ret
    .size saber_kem_merged_fwd_last, . - saber_kem_merged_fwd_last

# inv_first(a, twiddles, scale): inverse layers 6–4 in place in the 8 groups of 32, group g with
# the seven twiddles at twiddles + 56·g (the last one including F), the sums of the third layer
# multiplied by F = *scale. F is kept at sp + 0..8 and swapped with the last twiddle (t3, t4).
    entry saber_kem_merged_inv_first
    save
    lw t6, 0(a2)
    sw t6, 0(sp)
    lw t6, 4(a2)
    sw t6, 4(sp)
    addi a2, a0, 1024
    li t5, Q
2:
    load_twiddles a1
    addi a1, a1, 56
    .rept 4
    load_column a0, 16, lw
    inverse_three_unscaled
    lw t3, 0(sp)
    lw t4, 4(sp)
    mulc a3, a3, t3, t4
    mulc a4, a4, t3, t4
    mulc a5, a5, t3, t4
    mulc a6, a6, t3, t4
    lw t3, -8(a1)
    lw t4, -4(a1)
    store_column a0, 16
    addi a0, a0, 4
    .endr
    addi a0, a0, 112
    bne a0, a2, 2b
    restore
    ret
    .size saber_kem_merged_inv_first, . - saber_kem_merged_inv_first

# The canonical centred residue of \x in (−q'/2, 1.5·q'), HALF_Q in t6: x − q'·[HALF_Q < x].
.macro centre x
    slt ra, t6, \x
    mul ra, ra, t5
    sub \x, \x, ra
.endm

# \x − q'·⌊\x·c/2^32⌋, c = ⌊2^32/q'⌉ in t6 (multiplication by one).
.macro barrett x
    mulh ra, \x, t6
    mul ra, ra, t5
    sub \x, \x, ra
.endm

.macro put x, offset, add
    .if \add
    lhu ra, \offset(a1)
    add ra, ra, \x
    sh ra, \offset(a1)
    .else
    sh \x, \offset(a1)
    .endif
.endm

# inv_last(a, out, twiddles, one): inverse layers 3–1, 32 columns at stride 32, the sums of the
# last layer reduced by the multiplication by one, every coefficient made canonical and stored
# to (or added into) out[j + 32k] as a u16; a is wiped as it is read. The two constants live at
# sp + 0..8.
.macro inv_last name, add
    entry \name
    save
    lw t6, 4(a3)
    sw t6, 0(sp)
    li t6, HALF_Q
    sw t6, 4(sp)
    load_twiddles a2
    li t5, Q
    addi a2, a1, 64
1:
    load_column a0, 128, lw
    .irp offset, 0, 128, 256, 384, 512, 640, 768, 896
    sw zero, \offset(a0)
    .endr
    inverse_three_unscaled
    lw t6, 0(sp)
    barrett a3
    barrett a4
    barrett a5
    barrett a6
    lw t6, 4(sp)
    centre a3
    centre a4
    centre a5
    centre a6
    centre a7
    centre t0
    centre t1
    centre t2
    put a3, 0, \add
    put a4, 64, \add
    put a5, 128, \add
    put a6, 192, \add
    put a7, 256, \add
    put t0, 320, \add
    put t1, 384, \add
    put t2, 448, \add
    addi a0, a0, 4
    addi a1, a1, 2
    bne a1, a2, 1b
    restore
    ret
    .size \name, . - \name
.endm

    inv_last saber_kem_merged_inv_last_store, 0
    inv_last saber_kem_merged_inv_last_add, 1

# prepare_blocks(blocks, zetas, one_quotient): as the ARMv7-M kernel, from the last block down.
# Registers: b0–b3 in a3–a6, ζ in t0, t1, one_quotient in s0, outputs z1–z3 in a7, t2, s1.
    entry saber_kem_merged_prepare_blocks
    save
    mv s0, a2
    li t5, Q
    addi a1, a1, 512
    addi a2, a0, 1792
    addi s2, a0, 1024
1:
    addi s2, s2, -16
    addi a1, a1, -8
    addi a2, a2, -28
    lw a3, 0(s2)
    lw a4, 4(s2)
    lw a5, 8(s2)
    lw a6, 12(s2)
    lw t0, 0(a1)
    lw t1, 4(a1)
    mulc a7, a4, t0, t1
    mulc t2, a5, t0, t1
    mulc s1, a6, t0, t1
    mulh ra, a3, s0
    mul ra, ra, t5
    sub a3, a3, ra
    mulh ra, a4, s0
    mul ra, ra, t5
    sub a4, a4, ra
    mulh ra, a5, s0
    mul ra, ra, t5
    sub a5, a5, ra
    mulh ra, a6, s0
    mul ra, ra, t5
    sub a6, a6, ra
    sw a3, 0(a2)
    sw a4, 4(a2)
    sw a5, 8(a2)
    sw a6, 12(a2)
    sw a7, 16(a2)
    sw t2, 20(a2)
    sw s1, 24(a2)
    bne s2, a0, 1b
    restore
    ret
    .size saber_kem_merged_prepare_blocks, . - saber_kem_merged_prepare_blocks

# \acc (+)= x·y·2^(−32) mod q' for one term (Montgomery per term: hi(x·y) − hi(m·q') with
# m = lo(x·y)·q'^(−1) = x·\yq, \yq = y·q'^(−1) mod 2^32 computed once per block), at most
# |x·y|/2^32 + q'/2. \first: write instead of add. Scratch t6, ra.
.macro term acc, x, y, yq, first=0
    mul t6, \x, \yq
    .if \first
    mulh \acc, \x, \y
    mulh t6, t6, t5
    sub \acc, \acc, t6
    .else
    mulh ra, \x, \y
    mulh t6, t6, t5
    sub ra, ra, t6
    add \acc, \acc, ra
    .endif
.endm

# The companions y·q'^(−1) of b0–b3 (s0–s3) and ζb1–ζb3 (a7, t0, t1) into t2, t3, t4, s4–s7
# (QINV in s10).
.macro companions
    mul t2, s0, s10
    mul t3, s1, s10
    mul t4, s2, s10
    mul s4, s3, s10
    mul s5, a7, s10
    mul s6, t0, s10
    mul s7, t1, s10
.endm

# One base product, a0–a3 in a3–a6, b0–b3 in s0–s3, ζb1–ζb3 in a7, t0, t1 and their
# companions; output k goes through s8 to \out k.
.macro base_product out
    term s8, a3, s0, t2, 1
    term s8, a4, t1, s7
    term s8, a5, t0, s6
    term s8, a6, a7, s5
    \out 0
    term s8, a3, s1, t3, 1
    term s8, a4, s0, t2
    term s8, a5, t1, s7
    term s8, a6, t0, s6
    \out 1
    term s8, a3, s2, t4, 1
    term s8, a4, s1, t3
    term s8, a5, s0, t2
    term s8, a6, t1, s7
    \out 2
    term s8, a3, s3, s4, 1
    term s8, a4, s2, t4
    term s8, a5, s1, t3
    term s8, a6, s0, t2
    \out 3
.endm

.macro in_place_out k
    sw s8, (4 * \k)(a0)
.endm

# base_mul_quarter(w, s_hat, zetas): w = ŵ ∘ ŝ in place for 16 blocks, the ζ-multiples of ŝ
# (block b: ζ = zetas[b]) computed on the way.
    entry saber_kem_merged_base_mul_quarter
    save
    li t5, Q
    li s10, QINV
    addi s9, a0, 256
1:
    lw s0, 0(a1)
    lw s1, 4(a1)
    lw s2, 8(a1)
    lw s3, 12(a1)
    lw s8, 0(a2)
    lw s11, 4(a2)
    mulc a7, s1, s8, s11
    mulc t0, s2, s8, s11
    mulc t1, s3, s8, s11
    companions
    lw a3, 0(a0)
    lw a4, 4(a0)
    lw a5, 8(a0)
    lw a6, 12(a0)
    base_product in_place_out
    addi a0, a0, 16
    addi a1, a1, 16
    addi a2, a2, 8
    bne a0, s9, 1b
    restore
    ret
    .size saber_kem_merged_base_mul_quarter, . - saber_kem_merged_base_mul_quarter

# From four sign-extended bytes \b0..\b3 (two signed nibbles each, the even coefficient low):
# \lo = lo(b0) + c1·lo(b1) + c2·lo(b2) + c3·lo(b3) and \hi the same of the high nibbles
# (c1–c3 in s2–s4; \b1–\b3 and \t1–\t3 clobbered).
.macro comb_pair lo, hi, b0, b1, b2, b3, t1, t2, t3
    srai \hi, \b0, 4
    srai \t1, \b1, 4
    srai \t2, \b2, 4
    srai \t3, \b3, 4
    mul \t1, \t1, s2
    mul \t2, \t2, s3
    mul \t3, \t3, s4
    add \hi, \hi, \t1
    add \hi, \hi, \t2
    add \hi, \hi, \t3
    slli \lo, \b0, 28
    srai \lo, \lo, 28
    slli \b1, \b1, 28
    srai \b1, \b1, 28
    slli \b2, \b2, 28
    srai \b2, \b2, 28
    slli \b3, \b3, 28
    srai \b3, \b3, 28
    mul \b1, \b1, s2
    mul \b2, \b2, s3
    mul \b3, \b3, s4
    add \lo, \lo, \b1
    add \lo, \lo, \b2
    add \lo, \lo, \b3
.endm

# secret_quarter_first(s, out, twiddle, coeffs): as the ARMv7-M kernel (s packed two signed
# nibbles per byte), two columns j, j + 1 per byte read.
    entry saber_kem_merged_secret_quarter_first
    save
    lw s0, 0(a2)
    lw s1, 4(a2)
    lw s2, 0(a3)
    lw s3, 4(a3)
    lw s4, 8(a3)
    li t5, Q
    addi a2, a1, 128
1:
    lb t0, 0(a0)
    lb t1, 32(a0)
    lb t2, 64(a0)
    lb t3, 96(a0)
    comb_pair a3, a4, t0, t1, t2, t3, a5, a6, a7
    lb t0, 16(a0)
    lb t1, 48(a0)
    lb t2, 80(a0)
    lb t3, 112(a0)
    comb_pair s5, s6, t0, t1, t2, t3, a5, a6, a7
    mulc s5, s5, s0, s1
    mulc s6, s6, s0, s1
    add a5, a3, s5
    sub a6, a3, s5
    sw a5, 0(a1)
    sw a6, 128(a1)
    add a5, a4, s6
    sub a6, a4, s6
    sw a5, 4(a1)
    sw a6, 132(a1)
    addi a0, a0, 1
    addi a1, a1, 8
    bne a1, a2, 1b
    restore
    ret
    .size saber_kem_merged_secret_quarter_first, . - saber_kem_merged_secret_quarter_first

    .option pop
