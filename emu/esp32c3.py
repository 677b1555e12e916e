#!/usr/bin/env python3
"""Runs the RV32IMC emulator firmware under Unicorn with an ESP32-C3 RSA accelerator model.

Memory map (as on the ESP32-C3): code and read-only data in the flash-mapped window at
0x4200_0000, DRAM at 0x3FC8_0000 (320 KiB), UART0 at 0x6000_0000 (TX FIFO word at offset 0),
the RSA accelerator at 0x6003_C000, SYSTEM (clock/reset/power registers) at 0x600C_0000.

The SHA (0x6003_B000) and AES (0x6003_A000) accelerators are modelled in typical mode, as
strictly (see `CryptoBlocks`): SHA-256 blocks with this file's own compression function, AES-256
block encryption with the `cryptography` package.

The RSA model is strict and independent of the Rust host model: it computes the real product
(Z[0..2n) = X[0..n) * Z[n..2n), mode = 2n - 1) and stops the run on a protocol error (access
before clock/reset/power are set up, memory access before CLEAN, illegal mode, X operand longer
than the mode, writes or start while busy, start with the interrupt pending, reading the result
before IDLE was seen, words beyond the 96-word blocks, modular-operation registers, non-word
accesses).

Prints per KEM operation (the Kronecker backend on the RSA block, and the NTT): RV32
instructions, coprocessor multiplications and operand sizes, MMIO traffic; the peak stack; the
two-worker split of each operation (`saber_kem::two_worker`, run by the firmware with its two
workers taking turns on this hart; worker 2 on either backend, worker 1 on the NTT): each
worker's instructions, its stages between the hand-off points, and the critical path of the two
workers running at once, computed from them (see `critical_path`), with one CSV line per set and
operation, `two-worker,<set>,<op>,<single-worker instructions>,<critical-path instructions>`
(`,ntt` appended for the NTT on worker 2); the 90s sets with SHA-256/AES in software and on the
SHA/AES blocks, with the lines `accelerators,<set>,<op>,<software>,<on the blocks>`; then the
firmware's UART output, ending in "emu: N passed, M failed". Exit status: the firmware's (0 =
all checks passed), 2 on an emulation or protocol error.

Usage: esp32c3.py FIRMWARE.elf [--json OUT.json] [--profile]
(--profile splits each operation's instructions, and each worker's, into Keccak, Kronecker +
driver, NTT, memset/memcpy and the rest, by function symbol.)
"""

import bisect
import json
import sys
from collections import Counter, defaultdict

from elftools.elf.elffile import ELFFile
from unicorn import UC_ARCH_RISCV, UC_HOOK_BLOCK, UC_HOOK_CODE, UC_MODE_RISCV32, Uc, UcError
from unicorn.riscv_const import UC_RISCV_REG_A0, UC_RISCV_REG_PC, UC_RISCV_REG_SP

FLASH_BASE, FLASH_SIZE = 0x4200_0000, 4 << 20
RAM_BASE, RAM_SIZE = 0x3FC8_0000, 320 << 10
UART_BASE = 0x6000_0000
RSA_BASE = 0x6003_C000
SHA_BASE = 0x6003_B000
AES_BASE = 0x6003_A000
SYSTEM_BASE = 0x600C_0000
BLOCK_WORDS = 96
STACK_PAINT = 0xA5A5_A5A5

# SYSTEM registers (offsets) with reset values, and the bits that must hold for the RSA block to
# run: PERIP_CLK_EN1 bit 3 set; PERIP_RST_EN1 bits 3 (RSA) and 4 (DS) clear; RSA_PD_CTRL bit 0
# (MEM_PD) and bit 2 (FORCE_PD) clear.
SYSTEM_RESET = {0x14: 0x200, 0x1C: 0x1FE, 0x38: 0x1}
POWER_CONDITIONS = [(0x14, 1 << 3, 1 << 3), (0x1C, 0b11000, 0), (0x38, 0b101, 0)]

# RSA register offsets (V3 layout).
MODE, CLEAN, MODEXP_START, MODMULT_START, MULT_START, IDLE, INT_CLR = (
    0x804, 0x808, 0x80C, 0x810, 0x814, 0x818, 0x81C)
LATENCY_POLLS = 2
CLEAN_POLLS = 2


class ProtocolError(Exception):
    pass


SHA256_K = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2]
SHA256_IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]


def sha256_compress(state, block):
    """FIPS 180-4 §6.2.2 on one 64-byte block; returns the new state (eight words)."""
    def rotr(x, n):
        return ((x >> n) | (x << (32 - n))) & 0xFFFF_FFFF
    w = [int.from_bytes(block[4 * i:4 * i + 4], "big") for i in range(16)]
    for t in range(16, 64):
        s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
        s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
        w.append((w[t - 16] + s0 + w[t - 7] + s1) & 0xFFFF_FFFF)
    a, b, c, d, e, f, g, h = state
    for t in range(64):
        t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g))
              + SHA256_K[t] + w[t]) & 0xFFFF_FFFF
        t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) & 0xFFFF_FFFF
        a, b, c, d, e, f, g, h = (t1 + t2) & 0xFFFF_FFFF, a, b, c, (d + t1) & 0xFFFF_FFFF, e, f, g
    return [(x + y) & 0xFFFF_FFFF for x, y in zip(state, [a, b, c, d, e, f, g, h])]


def aes256_encrypt_block(key, block):
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return encryptor.update(block) + encryptor.finalize()


def swap32(x):
    return int.from_bytes(x.to_bytes(4, "little"), "big")


class CryptoBlocks:
    """The ESP32-C3 SHA and AES accelerators in typical mode, strict.

    Stops the run on: access while the block's clock is off or it (or the digital-signature or
    HMAC block holding it) is in reset; writes, starts, or reads of H_MEM / TEXT_OUT while busy;
    CONTINUE before START; modes other than SHA-256 / AES-256 encryption; a trigger with
    DMA_ENABLE set; the DMA and interrupt registers; non-word accesses; unknown registers."""

    def __init__(self, dev):
        self.dev = dev
        self.reset_sha()
        self.reset_aes()
        self.sha_blocks = 0
        self.aes_blocks = 0
        self.reads = 0
        self.writes = 0

    def reset_sha(self):
        self.sha_mode, self.sha_state, self.sha_message = 0, [0] * 8, [0] * 16
        self.sha_started, self.sha_busy = False, None

    def reset_aes(self):
        self.aes_key, self.aes_in, self.aes_out = [0] * 8, [0] * 4, [0] * 4
        self.aes_mode, self.aes_dma, self.aes_busy = 0, 0, None

    def powered(self, sha):
        clock, reset = self.dev.system[0x14], self.dev.system[0x1C]
        if sha:
            return clock & (1 << 2) and not reset & ((1 << 2) | (1 << 4) | (1 << 5))
        return clock & (1 << 1) and not reset & ((1 << 1) | (1 << 4))

    def check(self, uc, offset, size, sha):
        if size != 4 or offset & 3:
            self.dev.fail(uc, f"{'SHA' if sha else 'AES'} access of {size} bytes at +0x{offset:x}")
            return False
        if not self.powered(sha):
            self.dev.fail(uc, f"{'SHA' if sha else 'AES'} access while unclocked / in reset")
            return False
        return True

    # -- SHA ---------------------------------------------------------------------------------
    def sha_read(self, uc, offset, size, _):
        self.reads += 1
        if not self.check(uc, offset, size, True):
            return 0
        if offset == 0x18:  # BUSY
            if self.sha_busy is None:
                return 0
            if self.sha_busy == 0:
                block = b"".join(w.to_bytes(4, "little") for w in self.sha_message)
                self.sha_state = sha256_compress(self.sha_state, block)
                self.sha_blocks += 1
                self.sha_busy = None
                return 0
            self.sha_busy -= 1
            return 1
        if offset == 0x00:
            return self.sha_mode
        if 0x40 <= offset < 0x60:
            if self.sha_busy is not None:
                self.dev.fail(uc, "SHA H_MEM read while busy")
                return 0
            return swap32(self.sha_state[(offset - 0x40) // 4])
        if 0x80 <= offset < 0xC0:
            return self.sha_message[(offset - 0x80) // 4]
        self.dev.fail(uc, f"SHA register +0x{offset:x} read")
        return 0

    def sha_write(self, uc, offset, size, value, _):
        self.writes += 1
        if not self.check(uc, offset, size, True):
            return
        if self.sha_busy is not None:
            return self.dev.fail(uc, f"SHA register +0x{offset:x} written while busy")
        if offset == 0x00:
            if value != 2:
                return self.dev.fail(uc, f"SHA mode {value} (only SHA-256 modelled)")
            self.sha_mode = value
        elif offset in (0x10, 0x14):
            if self.sha_mode != 2:
                return self.dev.fail(uc, "SHA started without the SHA-256 mode")
            if offset == 0x10:
                self.sha_state, self.sha_started = list(SHA256_IV), True
            elif not self.sha_started:
                return self.dev.fail(uc, "SHA CONTINUE before any START")
            self.sha_busy = LATENCY_POLLS
        elif 0x40 <= offset < 0x60:
            self.sha_state[(offset - 0x40) // 4] = swap32(value)
        elif 0x80 <= offset < 0xC0:
            self.sha_message[(offset - 0x80) // 4] = value
        else:
            self.dev.fail(uc, f"SHA register +0x{offset:x} written")

    # -- AES ---------------------------------------------------------------------------------
    def aes_read(self, uc, offset, size, _):
        self.reads += 1
        if not self.check(uc, offset, size, False):
            return 0
        if offset == 0x4C:  # STATE
            if self.aes_busy is None:
                return 0
            if self.aes_busy == 0:
                key = b"".join(w.to_bytes(4, "little") for w in self.aes_key)
                block = b"".join(w.to_bytes(4, "little") for w in self.aes_in)
                out = aes256_encrypt_block(key, block)
                self.aes_out = [int.from_bytes(out[4 * i:4 * i + 4], "little") for i in range(4)]
                self.aes_blocks += 1
                self.aes_busy = None
                return 0
            self.aes_busy -= 1
            return 1
        if 0x30 <= offset < 0x40:
            if self.aes_busy is not None:
                self.dev.fail(uc, "AES TEXT_OUT read while busy")
                return 0
            return self.aes_out[(offset - 0x30) // 4]
        if offset == 0x40:
            return self.aes_mode
        self.dev.fail(uc, f"AES register +0x{offset:x} read")
        return 0

    def aes_write(self, uc, offset, size, value, _):
        self.writes += 1
        if not self.check(uc, offset, size, False):
            return
        if self.aes_busy is not None:
            return self.dev.fail(uc, f"AES register +0x{offset:x} written while busy")
        if offset < 0x20:
            self.aes_key[offset // 4] = value
        elif offset < 0x30:
            self.aes_in[(offset - 0x20) // 4] = value
        elif offset == 0x40:
            if value != 2:
                return self.dev.fail(uc, f"AES mode {value} (only AES-256 encryption modelled)")
            self.aes_mode = value
        elif offset == 0x90:
            self.aes_dma = value
        elif offset == 0x48:
            if self.aes_dma:
                return self.dev.fail(uc, "AES trigger in DMA mode")
            if self.aes_mode != 2:
                return self.dev.fail(uc, "AES trigger without the AES-256 encryption mode")
            self.aes_busy = LATENCY_POLLS
        else:
            self.dev.fail(uc, f"AES register +0x{offset:x} written")

    def holds_data(self):
        return any(self.sha_message) or any(self.aes_key) or any(self.aes_in) or (
            self.sha_started and any(self.sha_state))

    def snapshot(self):
        return {"sha_blocks": self.sha_blocks, "aes_blocks": self.aes_blocks,
                "crypto_reads": self.reads, "crypto_writes": self.writes}


class Peripherals:
    """UART0 output, SYSTEM clock registers and the RSA accelerator."""

    def __init__(self):
        self.uart = bytearray()
        self.system = dict(SYSTEM_RESET)
        self.crypto = CryptoBlocks(self)
        self.powered = False
        self.memory = [[0] * BLOCK_WORDS for _ in range(4)]  # M, Z, Y, X
        self.mode = 0
        self.busy = None  # remaining busy polls, or None when not running
        self.done_seen = False
        self.interrupt_pending = False
        self.clean_polls = 0
        self.multiplications = Counter()  # operand words -> count
        self.reads = 0
        self.writes = 0
        self.error = None

    # -- errors ------------------------------------------------------------------------------
    def fail(self, uc, message):
        if self.error is None:
            pc = uc.reg_read(UC_RISCV_REG_PC)
            self.error = f"{message} (pc 0x{pc:08x})"
        uc.emu_stop()

    # -- UART ------------------------------------------------------------------------------
    def uart_read(self, uc, offset, size, _):
        return 0

    def uart_write(self, uc, offset, size, value, _):
        if offset == 0:
            self.uart.append(value & 0xFF)

    # -- SYSTEM ----------------------------------------------------------------------------
    def system_read(self, uc, offset, size, _):
        if offset not in self.system or size != 4:
            self.fail(uc, f"SYSTEM read at +0x{offset:x} not modelled")
            return 0
        return self.system[offset]

    def system_write(self, uc, offset, size, value, _):
        if offset not in self.system or size != 4:
            return self.fail(uc, f"SYSTEM write at +0x{offset:x} not modelled")
        self.system[offset] = value
        if offset == 0x1C and value & (1 << 2):
            self.crypto.reset_sha()
        if offset == 0x1C and value & (1 << 1):
            self.crypto.reset_aes()
        powered = all(self.system[o] & mask == want for o, mask, want in POWER_CONDITIONS)
        if powered and not self.powered:
            self.memory = [[0] * BLOCK_WORDS for _ in range(4)]
            self.clean_polls = CLEAN_POLLS
            self.busy = None
            self.interrupt_pending = False
        self.powered = powered

    # -- RSA -------------------------------------------------------------------------------
    def word(self, uc, offset, writing):
        block, index = offset >> 9, (offset & 0x1FF) >> 2
        if index >= BLOCK_WORDS:
            return self.fail(uc, f"RSA memory word {index} beyond the 96-word block")
        if self.clean_polls:
            return self.fail(uc, "RSA memory accessed before CLEAN")
        if self.busy is not None:
            return self.fail(uc, "RSA memory " + ("written" if writing else "read") + " while busy")
        return block, index

    def rsa_read(self, uc, offset, size, _):
        self.reads += 1
        if size != 4 or offset & 3:
            return self.fail(uc, f"RSA read of {size} bytes at +0x{offset:x}") or 0
        if not self.powered:
            return self.fail(uc, "RSA read while unclocked / in reset / powered down") or 0
        if offset < 0x800:
            where = self.word(uc, offset, False)
            return self.memory[where[0]][where[1]] if where else 0
        if offset == CLEAN:
            if self.clean_polls:
                self.clean_polls -= 1
                return 0
            return 1
        if offset == IDLE:
            if self.busy is None:
                return 1
            if self.busy == 0:
                self.complete()
                return 1
            self.busy -= 1
            return 0
        if offset == MODE:
            return self.mode
        return self.fail(uc, f"RSA register +0x{offset:x} read") or 0

    def rsa_write(self, uc, offset, size, value, _):
        self.writes += 1
        if size != 4 or offset & 3:
            return self.fail(uc, f"RSA write of {size} bytes at +0x{offset:x}")
        if not self.powered:
            return self.fail(uc, "RSA write while unclocked / in reset / powered down")
        if offset < 0x800:
            where = self.word(uc, offset, True)
            if where:
                self.memory[where[0]][where[1]] = value
            return None
        if offset == MODE:
            if self.busy is not None:
                return self.fail(uc, "MODE written while busy")
            self.mode = value & 0x7F
        elif offset == MULT_START:
            self.start(uc)
        elif offset == INT_CLR:
            self.interrupt_pending = False
        else:
            self.fail(uc, f"RSA register +0x{offset:x} written (not plain multiplication)")
        return None

    def start(self, uc):
        if self.busy is not None:
            return self.fail(uc, "start while busy")
        if self.interrupt_pending:
            return self.fail(uc, "start with the previous interrupt not cleared")
        words = self.mode + 1
        if words & 1 or words > BLOCK_WORDS:
            return self.fail(uc, f"illegal mode {self.mode}")
        n = words // 2
        if any(self.memory[3][n:words]):
            return self.fail(uc, "X operand longer than the mode")
        self.multiplications[n] += 1
        self.busy = LATENCY_POLLS
        return None

    def complete(self):
        words = self.mode + 1
        n = words // 2
        x = sum(w << (32 * i) for i, w in enumerate(self.memory[3][:n]))
        y = sum(w << (32 * i) for i, w in enumerate(self.memory[1][n:words]))
        z = x * y
        for i in range(words):
            self.memory[1][i] = (z >> (32 * i)) & 0xFFFF_FFFF
        self.busy = None
        self.interrupt_pending = True

    def snapshot(self):
        return {
            "multiplications": sum(self.multiplications.values()),
            "by_words": dict(self.multiplications),
            "reads": self.reads,
            "writes": self.writes,
            **self.crypto.snapshot(),
        }


def instruction_count(code):
    """Instructions in a block of RV32IMC code (compressed ones are 2 bytes)."""
    count, i = 0, 0
    while i + 1 < len(code):
        i += 4 if code[i] & 3 == 3 else 2
        count += 1
    return count


CATEGORIES = ["keccak", "kronecker+driver", "ntt", "memset/memcpy", "other"]


def category(name):
    """Coarse attribution of a function for --profile."""
    if "keccak" in name:
        return "keccak"
    if "kronecker" in name or "esp32_rsa" in name or "volatile" in name:
        return "kronecker+driver"
    if "ntt" in name:
        return "ntt"
    if name in ("memset", "memcpy") or "compiler_builtins3mem" in name:
        return "memset/memcpy"
    return "other"


# The set numbers k of `firmware_main`.
SETS = {1: "LightSaber", 2: "Saber", 3: "FireSaber",
        4: "LightSaber-90s", 5: "Saber-90s", 6: "FireSaber-90s",
        7: "uLightSaber", 8: "uSaber", 9: "uFireSaber",
        10: "uLightSaber-90s", 11: "uSaber-90s", 12: "uFireSaber-90s",
        13: "LightSaber+", 14: "Saber+", 15: "FireSaber+"}
OPS = {1: "KeyGen", 2: "Encaps", 3: "Decaps"}
# Marks of the firmware: backend base b, set k, operation o: one worker b + 10k + o, two workers
# b + 200 + 10k + o (o = 4: the end); inside a two-worker operation Marked::join marks worker 1's
# start, worker 2's start and the end of both. Worker 1 has the NTT in every split.
BACKENDS = {0: "kronecker-rsa", 400: "ntt"}
# The 90s sets on the NTT: software SHA-256 and AES from 800, on the SHA and AES accelerators
# from 900 (+ 10k + o, their own numbers k below).
NINETIES = {1: "LightSaber-90s", 2: "Saber-90s", 3: "FireSaber-90s",
            4: "uLightSaber-90s", 5: "uSaber-90s", 6: "uFireSaber-90s"}
NINETIES_MARKS, ENGINE_MARKS = 800, 900
SPLIT_BASE = 200
WORKER_1, WORKER_2, JOINED = 1001, 1002, 1003
# The hand-off of the default `TwoWorkers` (two entries), and the others reported.
DEFAULT_SLOTS = 2
SLOT_CHOICES = (1, 2, 4)
# Hand-off functions the harness hooks (legacy-mangled names inside `Handoff`), and the event
# each records: worker 1 publishes ring entries and posts the message, worker 2 takes them.
HANDOFF_POINTS = {"7publish": "publish", "4take": "take", "12post_message": "post",
                  "12take_message": "await"}


def critical_path(first, second, worker1, worker2, slots):
    """Instructions from the join until both workers are done, if they ran at once.

    `first`: worker 1's hand-off events in order, (kind, own instructions when it starts), kind
    "publish" (the next ring entry) or "post" (the message); `second`: worker 2's, "take" (the
    next ring entry) or "await" (the message). Both are measured with the workers taking turns,
    so neither waited; `worker1`, `worker2`: their totals. Both workers run at one instruction
    per cycle. Entry k can be taken once published, and published only once entry k - slots was
    taken (the ring is full until then); the message can be taken once posted. Returns
    (critical path, worker 1's waits, worker 2's waits)."""
    published, taken = [], []  # global time entry k is published / taken
    posted = None
    stall = [0, 0]
    i = j = 0
    while i < len(first) or j < len(second):
        progressed = False
        if i < len(first):
            kind, own = first[i]
            at = own + stall[0]
            ready = at
            if kind == "publish":
                k = len(published)
                if k >= slots:
                    ready = taken[k - slots] if k - slots < len(taken) else None
            if ready is not None:
                start = max(at, ready)
                stall[0] += start - at
                if kind == "publish":
                    published.append(start)
                else:
                    posted = start
                i += 1
                progressed = True
        if j < len(second):
            kind, own = second[j]
            at = own + stall[1]
            if kind == "take":
                k = len(taken)
                ready = published[k] if k < len(published) else None
            else:
                ready = posted
            if ready is not None:
                start = max(at, ready)
                stall[1] += start - at
                if kind == "take":
                    taken.append(start)
                j += 1
                progressed = True
        if not progressed:
            raise ValueError("the hand-off events of the two workers deadlock")
    return max(worker1 + stall[0], worker2 + stall[1]), stall[0], stall[1]


def run(path, profile=False):
    with open(path, "rb") as f:
        elf = ELFFile(f)
        symtab = list(elf.get_section_by_name(".symtab").iter_symbols())
        symbols = {s.name: s["st_value"] for s in symtab}
        functions = sorted((s["st_value"], category(s.name)) for s in symtab
                           if s["st_info"]["type"] == "STT_FUNC" and s["st_size"] > 0)
        segments = [(s["p_vaddr"], s.data()) for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
        entry = elf.header["e_entry"]
        handoff = {event: [s["st_value"] for s in symtab
                           if s["st_info"]["type"] == "STT_FUNC" and "Handoff" in s.name
                           and point in s.name]
                   for point, event in HANDOFF_POINTS.items()}

    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV32)
    uc.mem_map(FLASH_BASE, FLASH_SIZE)
    uc.mem_map(RAM_BASE, RAM_SIZE)
    bss_end, stack_top = symbols["__bss_end"], symbols["__stack_top"]
    paint_from = (bss_end + 3) & ~3
    uc.mem_write(paint_from, STACK_PAINT.to_bytes(4, "little") * ((stack_top - paint_from) // 4))
    for address, data in segments:
        if data:
            uc.mem_write(address, data)

    dev = Peripherals()
    uc.mmio_map(UART_BASE, 0x1000, dev.uart_read, None, dev.uart_write, None)
    uc.mmio_map(RSA_BASE, 0x1000, dev.rsa_read, None, dev.rsa_write, None)
    uc.mmio_map(SYSTEM_BASE, 0x1000, dev.system_read, None, dev.system_write, None)
    uc.mmio_map(SHA_BASE, 0x1000, dev.crypto.sha_read, None, dev.crypto.sha_write, None)
    uc.mmio_map(AES_BASE, 0x1000, dev.crypto.aes_read, None, dev.crypto.aes_write, None)

    executed = [0]
    block_sizes = {}
    starts = [a for a, _ in functions]
    current_mark = [0]
    current_worker = [0]
    split = defaultdict(Counter)  # (operation mark, worker) -> category -> instructions
    events = []  # (what, executed): "publish" and "take" hand-off points, and every mark

    def on_block(uc, address, size, _):
        n = block_sizes.get(address)
        if n is None:
            n = block_sizes[address] = instruction_count(uc.mem_read(address, size))
        executed[0] += n
        if profile:
            key = (current_mark[0], current_worker[0])
            split[key][functions[bisect.bisect_right(starts, address) - 1][1]] += n

    marks = []

    def deepest_since_paint(uc):
        """Lowest stack address written since the last paint (stack grows down)."""
        sp = uc.reg_read(UC_RISCV_REG_SP)
        data = bytes(uc.mem_read(paint_from, sp - paint_from))
        untouched = len(data) - len(data.lstrip(b"\xa5"))
        return paint_from + (untouched & ~3)

    def on_mark(uc, address, size, _):
        mark = uc.reg_read(UC_RISCV_REG_A0)
        events.append((mark, executed[0]))
        if mark in (WORKER_1, WORKER_2, JOINED):
            current_worker[0] = {WORKER_1: 1, WORKER_2: 2, JOINED: 0}[mark]
            return
        deepest = deepest_since_paint(uc)
        current_mark[0] = mark
        current_worker[0] = 0
        marks.append((current_mark[0], executed[0], dev.snapshot(), stack_top - deepest,
                      uc.reg_read(UC_RISCV_REG_SP)))
        # Repaint below the live frames so the next interval's peak is measured on its own.
        sp = uc.reg_read(UC_RISCV_REG_SP)
        uc.mem_write(paint_from, b"\xa5" * ((sp - 64 - paint_from) & ~3))

    uc.hook_add(UC_HOOK_BLOCK, on_block)
    uc.hook_add(UC_HOOK_CODE, on_mark, begin=symbols["emu_mark"], end=symbols["emu_mark"])
    for event, addresses in handoff.items():
        for address in addresses:
            uc.hook_add(UC_HOOK_CODE, lambda uc, a, s, k: events.append((k, executed[0])),
                        event, begin=address, end=address)
    exit_at = symbols["emu_exit"]
    try:
        uc.emu_start(entry, exit_at, timeout=3600 * 1_000_000)
    except UcError as e:
        dev.error = dev.error or f"emulation error {e} at pc 0x{uc.reg_read(UC_RISCV_REG_PC):08x}"
    uart = dev.uart.decode("utf-8", "replace")
    if dev.error:
        sys.stdout.write(uart)
        print(f"esp32c3 emulator: {dev.error}")
        return 2, None
    if uc.reg_read(UC_RISCV_REG_PC) != exit_at:
        print("esp32c3 emulator: firmware did not reach emu_exit (timeout?)")
        return 2, None
    code = uc.reg_read(UC_RISCV_REG_A0)

    painted = uc.mem_read(paint_from, stack_top - paint_from)
    lowest = next(
        (paint_from + i for i in range(0, len(painted), 4)
         if painted[i:i + 4] != STACK_PAINT.to_bytes(4, "little")),
        stack_top,
    )
    report = {"uart": uart, "exit_code": code, "instructions": executed[0], "peak_stack_bytes": max([stack_top - lowest] + [m[3] for m in marks]),
              "operations": []}
    by_id = {m[0]: m for m in marks}
    report["two_worker"] = two_worker_report(events, by_id, split)
    report["accelerators"] = accelerator_report(by_id)
    for base, backend, k, name, o, op in each_operation():
        start, end = by_id.get(base + 10 * k + o), by_id.get(base + 10 * k + o + 1)
        if not start or not end:
            continue
        before, after = start[2], end[2]
        words = Counter(after["by_words"])
        words.subtract(before["by_words"])
        report["operations"].append({
            "set": name, "operation": op, "backend": backend,
            "instructions": end[1] - start[1],
            "multiplications": after["multiplications"] - before["multiplications"],
            "by_words": {int(w): c for w, c in sorted(words.items()) if c},
            "mmio_reads": after["reads"] - before["reads"],
            "mmio_writes": after["writes"] - before["writes"],
            "instructions_by_category": dict(split.get((base + 10 * k + o, 0), {})),
            # Below the caller's stack pointer at the start mark: the operation's own use.
            "stack_bytes": start[4] - (stack_top - end[3]),
        })
    return code, report


def each_operation():
    """(mark base, backend, set number, set, operation number, operation) of every operation."""
    for base, backend in BACKENDS.items():
        for k, name in SETS.items():
            for o, op in OPS.items():
                yield base, backend, k, name, o, op


def accelerator_report(by_id):
    """Per 90s set and operation: instructions in software and on the SHA/AES accelerators."""
    out = []
    for k, name in NINETIES.items():
        for o, op in OPS.items():
            marks = [(base + 10 * k + o, base + 10 * k + o + 1)
                     for base in (NINETIES_MARKS, ENGINE_MARKS)]
            if not all(a in by_id and b in by_id for a, b in marks):
                continue
            (sw0, sw1), (hw0, hw1) = [(by_id[a], by_id[b]) for a, b in marks]
            delta = {key: hw1[2][key] - hw0[2][key]
                     for key in ("sha_blocks", "aes_blocks", "crypto_reads", "crypto_writes")}
            out.append({"set": name, "operation": op, "software": sw1[1] - sw0[1],
                        "accelerators": hw1[1] - hw0[1], **delta})
    return out


def print_accelerators(rows):
    print("\n| set | operation | software SHA-2/AES | SHA and AES accelerators | ratio "
          "| SHA blocks | AES blocks | accelerator MMIO reads / writes |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['set']} | {r['operation']} | {r['software']:,} | {r['accelerators']:,} "
              f"| {r['accelerators'] / r['software']:.3f} | {r['sha_blocks']:,} "
              f"| {r['aes_blocks']:,} | {r['crypto_reads']:,} / {r['crypto_writes']:,} |")
    print()
    for r in rows:
        print(f"accelerators,{r['set']},{r['operation']},{r['software']},{r['accelerators']}")


def two_worker_report(events, by_id, split):
    """Per two-worker operation: the workers' instructions, stages and critical paths."""
    out = []
    position = {}
    for i, (what, _) in enumerate(events):
        if isinstance(what, int) and what not in position:
            position[what] = i
    for base, backend, k, name, o, op in each_operation():
        start = base + SPLIT_BASE + 10 * k + o
        end = start + 1
        if start not in position or end not in position:
            continue
        inside = events[position[start]:position[end] + 1]
        at = {what: t for what, t in inside if isinstance(what, int)}
        t0, t1, t2, t3, t4 = (at[start], at[WORKER_1], at[WORKER_2], at[JOINED], at[end])
        first = [(what, t - t1) for what, t in inside
                 if what in ("publish", "post") and t1 <= t < t2]
        second = [(what, t - t2) for what, t in inside
                  if what in ("take", "await") and t2 <= t < t3]
        published = [t for what, t in first if what == "publish"]
        taken = [t for what, t in second if what == "take"]
        single = (by_id.get(base + 10 * k + o + 1, [0, 0])[1]
                  - by_id.get(base + 10 * k + o, [0, 0])[1])
        serial = (t1 - t0) + (t4 - t3)
        paths = {}
        for slots in SLOT_CHOICES:
            path, wait1, wait2 = critical_path(first, second, t2 - t1, t3 - t2, slots)
            paths[slots] = {"critical_path": serial + path, "worker1_waits": wait1,
                            "worker2_waits": wait2}
        out.append({
            "set": name, "operation": op, "backend": backend, "single_worker": single,
            "before_join": t1 - t0, "after_join": t4 - t3,
            "worker1": t2 - t1, "worker2": t3 - t2,
            "handed_over": len(published),
            # Worker 1: until its first ring entry (seed_A, the coins and the secret, or the
            # decryption), and after its last; worker 2: until it first asks for an entry
            # (FO hashes, GenSecret), between its first and last request (its products,
            # worker 1's outputs), and after the last (packing, the final hashes).
            "worker1_first_entry": published[0] if published else 0,
            "worker1_after_last_entry": (t2 - t1 - published[-1]) if published else 0,
            "worker2_before_first_entry": taken[0] if taken else 0,
            "worker2_between_entries": (taken[-1] - taken[0]) if taken else 0,
            "worker2_after_last_entry": (t3 - t2 - taken[-1]) if taken else 0,
            "paths": paths,
            "worker1_by_category": dict(split.get((start, 1), {})),
            "worker2_by_category": dict(split.get((start, 2), {})),
        })
    return out


def print_two_worker(rows):
    print("\n| worker 2 | set | operation | one worker | worker 1 | worker 2 | outside the join "
          "| worker 1: to 1st entry / after last | worker 2: to 1st entry / entries / after "
          f"| critical path ({DEFAULT_SLOTS} slots) | ratio | waits 1 / 2 "
          "| critical path (1 / 4 slots) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        p = r["paths"][DEFAULT_SLOTS]
        print(f"| {r['backend']} | {r['set']} | {r['operation']} | {r['single_worker']:,} "
              f"| {r['worker1']:,} | {r['worker2']:,} | {r['before_join'] + r['after_join']:,} "
              f"| {r['worker1_first_entry']:,} / {r['worker1_after_last_entry']:,} "
              f"| {r['worker2_before_first_entry']:,} / {r['worker2_between_entries']:,} / "
              f"{r['worker2_after_last_entry']:,} | {p['critical_path']:,} "
              f"| {p['critical_path'] / r['single_worker']:.3f} "
              f"| {p['worker1_waits']:,} / {p['worker2_waits']:,} "
              f"| {r['paths'][1]['critical_path']:,} / {r['paths'][4]['critical_path']:,} |")
    if any(r["worker2_by_category"] for r in rows):
        print("\n| worker 2 | set | operation | worker | " + " | ".join(CATEGORIES) + " |")
        print("|---|---|---|---|" + "---:|" * len(CATEGORIES))
        for r in rows:
            for w in (1, 2):
                cells = " | ".join(f"{r[f'worker{w}_by_category'].get(c, 0):,}"
                                   for c in CATEGORIES)
                print(f"| {r['backend']} | {r['set']} | {r['operation']} | {w} | {cells} |")
    print()
    for r in rows:
        print(f"two-worker,{r['set']},{r['operation']},{r['single_worker']},"
              f"{r['paths'][DEFAULT_SLOTS]['critical_path']}"
              + ("" if r["backend"] == "kronecker-rsa" else f",{r['backend']}"))


def print_report(report):
    print("\n| backend | set | operation | RV32IMC instructions "
          "| RSA multiplications (operand words x count) | MMIO reads / writes | stack (bytes) |")
    print("|---|---|---|---:|---|---:|---:|")
    for r in report["operations"]:
        sizes = ", ".join(f"{w}x{c}" for w, c in r["by_words"].items())
        print(f"| {r['backend']} | {r['set']} | {r['operation']} | {r['instructions']:,} "
              f"| {r['multiplications']} ({sizes}) "
              f"| {r['mmio_reads']:,} / {r['mmio_writes']:,} | {r['stack_bytes']:,} |")
    print(f"\ntotal instructions {report['instructions']:,}; peak stack of the whole firmware "
          f"{report['peak_stack_bytes']:,} bytes (per operation: below the caller's "
          f"stack pointer)")
    if any(r["instructions_by_category"] for r in report["operations"]):
        print("\n| backend | set | operation | " + " | ".join(CATEGORIES) + " |")
        print("|---|---|---|" + "---:|" * len(CATEGORIES))
        for r in report["operations"]:
            cells = " | ".join(f"{r['instructions_by_category'].get(c, 0):,}" for c in CATEGORIES)
            print(f"| {r['backend']} | {r['set']} | {r['operation']} | {cells} |")
    print_two_worker(report["two_worker"])
    print_accelerators(report["accelerators"])


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    code, report = run(sys.argv[1], profile="--profile" in sys.argv)
    if report:
        print_report(report)
        if "--json" in sys.argv:
            with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
                json.dump(report, f, indent=1)
        # The firmware's own output last: its closing line is "emu: N passed, M failed".
        sys.stdout.write(report["uart"])
    return code


if __name__ == "__main__":
    sys.exit(main())
