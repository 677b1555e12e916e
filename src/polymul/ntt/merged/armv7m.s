@ ARMv7-M kernels of the merged-layer NTT (src/polymul/ntt/merged.rs; portable reference
@ src/polymul/ntt/merged/portable.rs, which computes the same values bit for bit). AAPCS:
@ arguments in r0–r3, r4–r11 preserved. Only ARMv7-M instructions (Cortex-M3/M4/M7/M33).
@
@ Register roles in the transform passes: x0–x7 = r1–r8, a twiddle (ω, ⌊ω·2^32/q'⌉) in r9, r10,
@ the product scratch in r11, r12, q' in lr, the column pointer in r0. The twiddles of a merged
@ group are copied to the stack first (sp + 0..56), so that no register holds their address.

    .syntax unified
    .thumb

    .equ Q, 41944577
    .equ HALF_Q, 20972288
    .equ NEG_QINV, 0xda5c05ff

@ The header of a global Thumb function \name.
.macro begin_function name
    .section .text.\name,"ax",%progbits
    .global \name
    .type \name,%function
    .thumb_func
    .p2align 2
\name:
.endm

.macro load_q reg
    movw \reg, #(Q & 0xffff)
    movt \reg, #(Q >> 16)
.endm

@ r11 = xj·ω mod q' = xj·ω − q'·⌊xj·ω'/2^32⌋ (Shoup).
.macro mulc xj
    smull r11, r12, \xj, r10
    mul r11, \xj, r9
    mls r11, r12, lr, r11
.endm

@ xj = xj·ω mod q', in place.
.macro mulc_in xj
    smull r11, r12, \xj, r10
    mul \xj, \xj, r9
    mls \xj, r12, lr, \xj
.endm

@ Cooley–Tukey: (xi, xj) = (xi + xj·ω, xi − xj·ω).
.macro ct xi, xj
    mulc \xj
    sub \xj, \xi, r11
    add \xi, \xi, r11
.endm

@ Cooley–Tukey with an exact product, for |xj| <= 5 (a secret's first layer: |xj·ω| <= 5·q'/2
@ < 2^31, no reduction needed).
.macro ct_small xi, xj
    mul r11, \xj, r9
    sub \xj, \xi, r11
    add \xi, \xi, r11
.endm

@ Sum and difference: (xi, xj) = (xi + xj, xi − xj), the sum as 2·xi − (xi − xj).
.macro sumdiff xi, xj
    sub \xj, \xi, \xj
    rsb \xi, \xj, \xi, lsl #1
.endm

@ Gentleman–Sande: (xi, xj) = (xi + xj, (xi − xj)·ω).
.macro gs xi, xj
    sumdiff \xi, \xj
    mulc_in \xj
.endm

@ Three Cooley–Tukey layers on x0–x7 with the seven twiddles at sp + 0..56; with \small, inputs
@ of a secret (|x| <= 5), whose first layer's products are exact.
.macro forward_three small=0
    ldrd r9, r10, [sp, #0]
    .if \small
    ct_small r1, r5
    ct_small r2, r6
    ct_small r3, r7
    ct_small r4, r8
    .else
    ct r1, r5
    ct r2, r6
    ct r3, r7
    ct r4, r8
    .endif
    ldrd r9, r10, [sp, #8]
    ct r1, r3
    ct r2, r4
    ldrd r9, r10, [sp, #16]
    ct r5, r7
    ct r6, r8
    ldrd r9, r10, [sp, #24]
    ct r1, r2
    ldrd r9, r10, [sp, #32]
    ct r3, r4
    ldrd r9, r10, [sp, #40]
    ct r5, r6
    ldrd r9, r10, [sp, #48]
    ct r7, r8
.endm

@ Two Gentleman–Sande layers on x0–x7 with the twiddles at sp + 0..48, then the sums and
@ differences of the third (pairs (k, k + 4)), the differences multiplied by the twiddle at
@ sp + 48.
.macro inverse_three_unscaled
    ldrd r9, r10, [sp, #0]
    gs r1, r2
    ldrd r9, r10, [sp, #8]
    gs r3, r4
    ldrd r9, r10, [sp, #16]
    gs r5, r6
    ldrd r9, r10, [sp, #24]
    gs r7, r8
    ldrd r9, r10, [sp, #32]
    gs r1, r3
    gs r2, r4
    ldrd r9, r10, [sp, #40]
    gs r5, r7
    gs r6, r8
    sumdiff r1, r5
    sumdiff r2, r6
    sumdiff r3, r7
    sumdiff r4, r8
    ldrd r9, r10, [sp, #48]
    mulc_in r5
    mulc_in r6
    mulc_in r7
    mulc_in r8
.endm

@ x0–x7 = r1–r8 from or to [\base + \offset + k·\stride] with \op (ldr, ldrh, ldrsb, str).
.macro column op, base, stride, offset=0
    \op r1, [\base, #(\offset + 0 * \stride)]
    \op r2, [\base, #(\offset + 1 * \stride)]
    \op r3, [\base, #(\offset + 2 * \stride)]
    \op r4, [\base, #(\offset + 3 * \stride)]
    \op r5, [\base, #(\offset + 4 * \stride)]
    \op r6, [\base, #(\offset + 5 * \stride)]
    \op r7, [\base, #(\offset + 6 * \stride)]
    \op r8, [\base, #(\offset + 7 * \stride)]
.endm

@ Copies seven twiddles (56 bytes) from [\src] to sp + 0..56 (clobbers r1–r7, r11; \src
@ advances by 56).
.macro copy_twiddles src
    ldm \src!, {r1-r7}
    stm sp, {r1-r7}
    ldm \src!, {r1-r7}
    add r11, sp, #28
    stm r11, {r1-r7}
.endm

@ Column j (of four at a time) of fwd_first: the inputs at [input + j·\step/32 + k·\step]
@ (input pointer at sp + 56), the outputs to [r0 + 4j + 128k].
.macro fwd_first_column load, step, extend, j
    ldr r12, [sp, #56]
    column \load, r12, \step, (\j * \step / 32)
    .if \extend
    sbfx r1, r1, #0, #13
    sbfx r2, r2, #0, #13
    sbfx r3, r3, #0, #13
    sbfx r4, r4, #0, #13
    sbfx r5, r5, #0, #13
    sbfx r6, r6, #0, #13
    sbfx r7, r7, #0, #13
    sbfx r8, r8, #0, #13
    forward_three
    .else
    forward_three 1
    .endif
    column str, r0, 128, (4 * \j)
.endm

@ fwd_first(input, out, twiddles): layers 1–3, 32 columns at stride 32, four per iteration.
@ \load and \step read one input coefficient and the distance between the column's inputs;
@ \extend: 13-bit residues, centred first (else a secret, |s| <= 5, whose first layer is
@ exact).
.macro fwd_first name, load, step, extend
    begin_function \name
    push {r4-r11, lr}
    sub sp, sp, #64
    str r0, [sp, #56]
    mov r0, r1
    mov r12, r2
    copy_twiddles r12
    add r3, r0, #128
    str r3, [sp, #60]
    load_q lr
1:
    fwd_first_column \load, \step, \extend, 0
    fwd_first_column \load, \step, \extend, 1
    fwd_first_column \load, \step, \extend, 2
    fwd_first_column \load, \step, \extend, 3
    ldr r12, [sp, #56]
    add r12, r12, #(4 * \step / 32)
    str r12, [sp, #56]
    add r0, r0, #16
    ldr r12, [sp, #60]
    cmp r0, r12
    bne 1b
    add sp, sp, #64
    pop {r4-r11, pc}
    .size \name, . - \name
.endm

    fwd_first saber_kem_merged_fwd_first_u13, ldrh, 64, 1
    fwd_first saber_kem_merged_fwd_first_s8, ldrsb, 32, 0

@ fwd_last(groups, count, twiddles): layers 4–6 in place in `count` groups of 32, group g
@ with the seven twiddles at twiddles + 56·g (the four columns of a group unrolled).
    begin_function saber_kem_merged_fwd_last
    push {r4-r11, lr}
    sub sp, sp, #64
    add r1, r0, r1, lsl #7
    str r1, [sp, #56]
    str r2, [sp, #60]
    load_q lr
2:
    ldr r12, [sp, #60]
    copy_twiddles r12
    str r12, [sp, #60]
    .irp j, 0, 4, 8, 12
    column ldr, r0, 16, \j
    forward_three
    column str, r0, 16, \j
    .endr
    add r0, r0, #128
    ldr r12, [sp, #56]
    cmp r0, r12
    bne 2b
    add sp, sp, #64
    pop {r4-r11, pc}
    .size saber_kem_merged_fwd_last, . - saber_kem_merged_fwd_last

@ inv_first(a, twiddles, scale): inverse layers 6–4 in place in the 8 groups of 32, group g
@ with the seven twiddles at twiddles + 56·g (the last one including F), the sums of the
@ third layer multiplied by F = *scale (the four columns of a group unrolled).
    begin_function saber_kem_merged_inv_first
    push {r4-r11, lr}
    sub sp, sp, #72
    ldrd r3, r12, [r2]
    strd r3, r12, [sp, #56]
    add r3, r0, #1024
    str r3, [sp, #64]
    str r1, [sp, #68]
    load_q lr
2:
    ldr r12, [sp, #68]
    copy_twiddles r12
    str r12, [sp, #68]
    .irp j, 0, 4, 8, 12
    column ldr, r0, 16, \j
    inverse_three_unscaled
    ldrd r9, r10, [sp, #56]
    mulc_in r1
    mulc_in r2
    mulc_in r3
    mulc_in r4
    column str, r0, 16, \j
    .endr
    add r0, r0, #128
    ldr r12, [sp, #64]
    cmp r0, r12
    bne 2b
    add sp, sp, #72
    pop {r4-r11, pc}
    .size saber_kem_merged_inv_first, . - saber_kem_merged_inv_first

@ \x = the Montgomery reduction of the 64-bit sum at [r0 + \offset] (R = 2^32, −q'^(−1) in
@ r9, m in r10): \x = (sum + m·q')/2^32 with m = low(sum)·(−q'^(−1)), whose low word r11 is
@ then zero; both words of the sum are overwritten with it (the wipe).
.macro reduce_wide x, offset
    ldrd r11, \x, [r0, #\offset]
    mul r10, r11, r9
    smlal r11, \x, r10, lr
    strd r11, r11, [r0, #\offset]
.endm

@ inv_first_wide(sums, out, twiddles, scale): as inv_first, from the Montgomery reductions of the
@ 64-bit sums (read and wiped, group g column j at sums + 8·(32g + j) + 32k) into out (group g
@ column j at out + 4·(32g + j) + 16k); the four columns of a group unrolled.
    begin_function saber_kem_merged_inv_first_wide
    push {r4-r11, lr}
    sub sp, sp, #80
    ldrd r3, r12, [r3]
    strd r3, r12, [sp, #56]
    add r3, r0, #2048
    str r3, [sp, #64]
    str r2, [sp, #68]
    str r1, [sp, #72]
    load_q lr
2:
    ldr r12, [sp, #68]
    copy_twiddles r12
    str r12, [sp, #68]
    .irp j, 0, 1, 2, 3
    movw r9, #(NEG_QINV & 0xffff)
    movt r9, #(NEG_QINV >> 16)
    reduce_wide r1, (8 * \j + 0)
    reduce_wide r2, (8 * \j + 32)
    reduce_wide r3, (8 * \j + 64)
    reduce_wide r4, (8 * \j + 96)
    reduce_wide r5, (8 * \j + 128)
    reduce_wide r6, (8 * \j + 160)
    reduce_wide r7, (8 * \j + 192)
    reduce_wide r8, (8 * \j + 224)
    inverse_three_unscaled
    ldrd r9, r10, [sp, #56]
    mulc_in r1
    mulc_in r2
    mulc_in r3
    mulc_in r4
    ldr r12, [sp, #72]
    column str, r12, 16, (4 * \j)
    .endr
    ldr r12, [sp, #72]
    add r12, r12, #128
    str r12, [sp, #72]
    add r0, r0, #256
    ldr r12, [sp, #64]
    cmp r0, r12
    bne 2b
    add sp, sp, #80
    pop {r4-r11, pc}
    .size saber_kem_merged_inv_first_wide, . - saber_kem_merged_inv_first_wide

@ The canonical centred residue of \x in (−q'/2, 1.5·q'), HALF_Q in r10: x − (q' & ((HALF_Q −
@ x) >> 31)).
.macro centre x
    sub r11, r10, \x
    and r11, lr, r11, asr #31
    sub \x, \x, r11
.endm

@ Stores (\add = 0) or adds (\add = 1) \x as a u16 at [r0 + \offset].
.macro put x, offset, add
    .if \add
    ldrh r11, [r0, #\offset]
    add r11, r11, \x
    strh r11, [r0, #\offset]
    .else
    strh \x, [r0, #\offset]
    .endif
.endm

@ Column j (of four at a time) of inv_last: the inputs at [a + 4j + 128k] (pointer at sp + 60),
@ wiped as they are read; the outputs to [out + 2j + 64k] (pointer at sp + 64).
.macro inv_last_column add, j
    ldr r0, [sp, #60]
    column ldr, r0, 128, (4 * \j)
    movs r11, #0
    str r11, [r0, #(4 * \j + 0)]
    str r11, [r0, #(4 * \j + 128)]
    str r11, [r0, #(4 * \j + 256)]
    str r11, [r0, #(4 * \j + 384)]
    str r11, [r0, #(4 * \j + 512)]
    str r11, [r0, #(4 * \j + 640)]
    str r11, [r0, #(4 * \j + 768)]
    str r11, [r0, #(4 * \j + 896)]
    inverse_three_unscaled
    ldr r9, [sp, #56]
    smull r11, r12, r1, r9
    mls r1, r12, lr, r1
    smull r11, r12, r2, r9
    mls r2, r12, lr, r2
    smull r11, r12, r3, r9
    mls r3, r12, lr, r3
    smull r11, r12, r4, r9
    mls r4, r12, lr, r4
    movw r10, #(HALF_Q & 0xffff)
    movt r10, #(HALF_Q >> 16)
    centre r1
    centre r2
    centre r3
    centre r4
    centre r5
    centre r6
    centre r7
    centre r8
    ldr r0, [sp, #64]
    put r1, (2 * \j + 0), \add
    put r2, (2 * \j + 64), \add
    put r3, (2 * \j + 128), \add
    put r4, (2 * \j + 192), \add
    put r5, (2 * \j + 256), \add
    put r6, (2 * \j + 320), \add
    put r7, (2 * \j + 384), \add
    put r8, (2 * \j + 448), \add
.endm

@ inv_last(a, out, twiddles, one): inverse layers 3–1, 32 columns at stride 32, four per
@ iteration, the sums of the last layer reduced by the multiplication by one (*one: (1,
@ ⌊2^32/q'⌉)), every coefficient made canonical and stored to (or added into) out[j + 32k] as a
@ u16; a is wiped as it is read.
.macro inv_last name, add
    begin_function \name
    push {r4-r11, lr}
    sub sp, sp, #76
    ldr r3, [r3, #4]
    str r3, [sp, #56]
    str r0, [sp, #60]
    str r1, [sp, #64]
    add r3, r1, #64
    str r3, [sp, #68]
    mov r12, r2
    copy_twiddles r12
    load_q lr
1:
    inv_last_column \add, 0
    inv_last_column \add, 1
    inv_last_column \add, 2
    inv_last_column \add, 3
    ldr r0, [sp, #60]
    add r0, r0, #16
    str r0, [sp, #60]
    ldr r0, [sp, #64]
    add r0, r0, #8
    str r0, [sp, #64]
    ldr r12, [sp, #68]
    cmp r0, r12
    bne 1b
    add sp, sp, #76
    pop {r4-r11, pc}
    .size \name, . - \name
.endm

    inv_last saber_kem_merged_inv_last_store, 0
    inv_last saber_kem_merged_inv_last_add, 1

@ One output of a base product: r7, r8 = the 64-bit dot product, reduced (Montgomery, R = 2^32,
@ −q'^(−1) in r12): r8 = (r7:r8 + m·q')/2^32 with m = r7·(−q'^(−1)); \m is a scratch.
.macro reduce m
    mul \m, r7, r12
    smlal r7, r8, \m, lr
.endm

@ The four outputs of one base product, a0–a3 in r3–r6, the block's b0, b1, b2, b3, ζb1, ζb2,
@ ζb3 at [r2 + 0..28]; each result in r8 goes to \out k (a macro taking k).
.macro base_product out
    @ c0 = a0·b0 + a1·ζb3 + a2·ζb2 + a3·ζb1
    ldr r9, [r2, #0]
    ldrd r10, r11, [r2, #16]
    smull r7, r8, r3, r9
    smlal r7, r8, r6, r10
    smlal r7, r8, r5, r11
    ldr r10, [r2, #24]
    smlal r7, r8, r4, r10
    reduce r11
    \out 0
    @ c1 = a0·b1 + a1·b0 + a2·ζb3 + a3·ζb2   (r9 = b0, r10 = ζb3)
    smull r7, r8, r4, r9
    smlal r7, r8, r5, r10
    ldr r11, [r2, #20]
    smlal r7, r8, r6, r11
    ldr r11, [r2, #4]
    smlal r7, r8, r3, r11
    reduce r11
    \out 1
    @ c2 = a0·b2 + a1·b1 + a2·b0 + a3·ζb3   (r9 = b0, r10 = ζb3)
    smull r7, r8, r5, r9
    smlal r7, r8, r6, r10
    ldrd r10, r11, [r2, #4]
    smlal r7, r8, r4, r10
    smlal r7, r8, r3, r11
    reduce r11
    \out 2
    @ c3 = a0·b3 + a1·b2 + a2·b1 + a3·b0    (r9 = b0, r10 = b1)
    smull r7, r8, r6, r9
    smlal r7, r8, r5, r10
    ldrd r10, r11, [r2, #8]
    smlal r7, r8, r4, r10
    smlal r7, r8, r3, r11
    reduce r11
    \out 3
.endm

@ ζb1, ζb2, ζb3 into r7, r8, r9 from b1–b3 in r4–r6 and ζ in r9, r10.
.macro zeta_multiples
    smull r11, r12, r4, r10
    mul r7, r4, r9
    mls r7, r12, lr, r7
    smull r11, r12, r5, r10
    mul r8, r5, r9
    mls r8, r12, lr, r8
    smull r11, r12, r6, r10
    mul r9, r6, r9
    mls r9, r12, lr, r9
.endm

@ prepare_blocks(blocks, zetas, one_quotient): for b = 63 down to 0, the block's b0..b3 at
@ blocks[4b..4b + 4] become blocks[7b..7b + 7] = b0..b3 multiplied by one (Barrett:
@ x − q'·⌊x·one_quotient/2^32⌋) and ζb1, ζb2, ζb3 (ζ = zetas[b]); 7b >= 4b, so no block is
@ overwritten before it is read.
    begin_function saber_kem_merged_prepare_blocks
    push {r4-r11, lr}
    sub sp, sp, #12
    str r2, [sp, #0]
    str r0, [sp, #4]
    add r1, r1, #512
    add r2, r0, #1792
    add r0, r0, #1024
    load_q lr
1:
    ldmdb r0!, {r3-r6}
    ldrd r9, r10, [r1, #-8]!
    zeta_multiples
    ldr r10, [sp, #0]
    smull r11, r12, r3, r10
    mls r3, r12, lr, r3
    smull r11, r12, r4, r10
    mls r4, r12, lr, r4
    smull r11, r12, r5, r10
    mls r5, r12, lr, r5
    smull r11, r12, r6, r10
    mls r6, r12, lr, r6
    stmdb r2!, {r3-r9}
    ldr r10, [sp, #4]
    cmp r0, r10
    bne 1b
    add sp, sp, #12
    pop {r4-r11, pc}
    .size saber_kem_merged_prepare_blocks, . - saber_kem_merged_prepare_blocks

@ One output of an unreduced base product: r7, r8 = \x0·\y0 + … + \x3·\y3, stored at [r0 + 8·\k]
@ (\add = 0) or added to the 64-bit sum there (\add = 1).
.macro dot k, add, x0, y0, x1, y1, x2, y2, x3, y3
    .if \add
    ldrd r7, r8, [r0, #(8 * \k)]
    smlal r7, r8, \x0, \y0
    .else
    smull r7, r8, \x0, \y0
    .endif
    smlal r7, r8, \x1, \y1
    smlal r7, r8, \x2, \y2
    smlal r7, r8, \x3, \y3
    strd r7, r8, [r0, #(8 * \k)]
.endm

@ base_mul_store / base_mul_add(acc, a_hat, prepared): the 64-bit sums acc[4b + k] = (or +=)
@ the unreduced products (â ∘ prepared) of the 64 blocks. a0–a3 in r3–r6; of the block's b0, b1,
@ b2, b3, ζb1, ζb2, ζb3 (prepared + 0..28): b0 in r9, b1 in lr, ζb3 in r10, ζb1 and ζb2 in r12,
@ r11 until c1 is done, then b2 and b3 there.
.macro base_mul_wide name, add
    begin_function \name
    push {r4-r11, lr}
    sub sp, sp, #4
    add r3, r0, #2048
    str r3, [sp, #0]
1:
    ldm r1!, {r3-r6}
    ldrd r9, lr, [r2, #0]
    ldrd r12, r11, [r2, #16]
    ldr r10, [r2, #24]
    @ c0 = a0·b0 + a1·ζb3 + a2·ζb2 + a3·ζb1
    dot 0, \add, r3, r9, r4, r10, r5, r11, r6, r12
    @ c1 = a0·b1 + a1·b0 + a2·ζb3 + a3·ζb2
    dot 1, \add, r3, lr, r4, r9, r5, r10, r6, r11
    ldrd r12, r11, [r2, #8]
    @ c2 = a0·b2 + a1·b1 + a2·b0 + a3·ζb3
    dot 2, \add, r3, r12, r4, lr, r5, r9, r6, r10
    @ c3 = a0·b3 + a1·b2 + a2·b1 + a3·b0
    dot 3, \add, r3, r11, r4, r12, r5, lr, r6, r9
    add r2, r2, #28
    add r0, r0, #32
    ldr r7, [sp, #0]
    cmp r0, r7
    bne 1b
    add sp, sp, #4
    pop {r4-r11, pc}
    .size \name, . - \name
.endm

    base_mul_wide saber_kem_merged_base_mul_store, 0
    base_mul_wide saber_kem_merged_base_mul_add, 1

.macro in_place_out k
    str r8, [r0, #(4 * \k)]
.endm

@ base_mul_quarter(w, s_hat, zetas): w = ŵ ∘ ŝ in place for 16 blocks, the ζ-multiples of ŝ
@ (block b: ζ = zetas[b]) computed into a stack copy of the block (sp + 0..28).
    begin_function saber_kem_merged_base_mul_quarter
    push {r4-r11, lr}
    sub sp, sp, #36
    add r3, r0, #256
    str r3, [sp, #28]
    load_q lr
1:
    ldm r1!, {r3-r6}
    ldrd r9, r10, [r2], #8
    zeta_multiples
    stm sp, {r3-r9}
    ldm r0, {r3-r6}
    movw r12, #(NEG_QINV & 0xffff)
    movt r12, #(NEG_QINV >> 16)
    str r2, [sp, #32]
    mov r2, sp
    base_product in_place_out
    ldr r2, [sp, #32]
    add r0, r0, #16
    ldr r9, [sp, #28]
    cmp r0, r9
    bne 1b
    add sp, sp, #36
    pop {r4-r11, pc}
    .size saber_kem_merged_base_mul_quarter, . - saber_kem_merged_base_mul_quarter

@ One output pair of secret_quarter_first: coefficients j + 0/64/128/192 (u) and j + 32 + 0/64/
@ 128/192 (v) are the nibbles at bit \lsb of the bytes at r0 + 0/32/64/96 and r0 + 16/48/80/112
@ (two coefficients per byte, signed, the even one low); out[j] = u + v·ω at [r1 + \at],
@ out[j + 32] = u − v·ω at [r1 + 128 + \at].
.macro quarter_pair lsb, at
    ldrb r3, [r0, #0]
    ldrb r4, [r0, #32]
    ldrb r5, [r0, #64]
    ldrb r6, [r0, #96]
    sbfx r3, r3, #\lsb, #4
    sbfx r4, r4, #\lsb, #4
    sbfx r5, r5, #\lsb, #4
    sbfx r6, r6, #\lsb, #4
    mla r3, r4, r11, r3
    mla r3, r5, r12, r3
    mla r3, r6, r2, r3
    ldrb r4, [r0, #16]
    ldrb r5, [r0, #48]
    ldrb r6, [r0, #80]
    ldrb r7, [r0, #112]
    sbfx r4, r4, #\lsb, #4
    sbfx r5, r5, #\lsb, #4
    sbfx r6, r6, #\lsb, #4
    sbfx r7, r7, #\lsb, #4
    mla r4, r5, r11, r4
    mla r4, r6, r12, r4
    mla r4, r7, r2, r4
    smull r5, r6, r4, r10
    mul r4, r4, r9
    mls r4, r6, lr, r4
    add r5, r3, r4
    sub r6, r3, r4
    str r5, [r1, #\at]
    str r6, [r1, #(128 + \at)]
.endm

@ secret_quarter_first(s, out, twiddle, coeffs): for j < 32, u = comb(j), v = comb(j + 32) with
@ comb(j) = s_j + c1·s_(j+64) + c2·s_(j+128) + c3·s_(j+192) (coeffs = c1, c2, c3; s packed two
@ signed nibbles per byte, s_(2k) in the low nibble of byte k), then out[j] = u + v·ω,
@ out[j + 32] = u − v·ω (twiddle = (ω, ω')).
    begin_function saber_kem_merged_secret_quarter_first
    push {r4-r11, lr}
    sub sp, sp, #4
    ldrd r9, r10, [r2]
    ldm r3, {r2, r3, r4}
    mov r11, r2
    mov r12, r3
    mov r2, r4
    add r3, r1, #128
    str r3, [sp, #0]
    load_q lr
1:
    quarter_pair 0, 0
    quarter_pair 4, 4
    add r0, r0, #1
    add r1, r1, #8
    ldr r7, [sp, #0]
    cmp r1, r7
    bne 1b
    add sp, sp, #4
    pop {r4-r11, pc}
    .size saber_kem_merged_secret_quarter_first, . - saber_kem_merged_secret_quarter_first
