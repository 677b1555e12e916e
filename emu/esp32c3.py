#!/usr/bin/env python3
"""Runs the RV32IMC emulator firmware under Unicorn with an ESP32-C3 RSA accelerator model.

Memory map (as on the ESP32-C3): code and read-only data in the flash-mapped window at
0x4200_0000, DRAM at 0x3FC8_0000 (320 KiB), UART0 at 0x6000_0000 (TX FIFO word at offset 0),
the RSA accelerator at 0x6003_C000, SYSTEM (clock/reset/power registers) at 0x600C_0000.

The RSA model is strict and independent of the Rust host model: it computes the real product
(Z[0..2n) = X[0..n) * Z[n..2n), mode = 2n - 1) and stops the run on a protocol error (access
before clock/reset/power are set up, memory access before CLEAN, illegal mode, X operand longer
than the mode, writes or start while busy, start with the interrupt pending, reading the result
before IDLE was seen, words beyond the 96-word blocks, modular-operation registers, non-word
accesses).

Prints per KEM operation: RV32 instructions, coprocessor multiplications and operand sizes,
MMIO traffic; the peak stack; the two-worker split of each operation (`saber_kem::two_worker`,
run by the firmware with its two workers taking turns on this hart): each worker's
instructions, its stages between the hand-off points, and the critical path of the two workers
running at once, computed from them (see `critical_path`), with one CSV line per set and
operation, `two-worker,<set>,<op>,<single-worker instructions>,<critical-path instructions>`;
then the firmware's UART output, ending in "emu: N passed, M failed". Exit status: the
firmware's (0 = all checks passed), 2 on an emulation or protocol error.

Usage: esp32c3.py FIRMWARE.elf [--json OUT.json] [--profile]
(--profile splits each operation's instructions, and each worker's, into Keccak, Kronecker +
driver, memset/memcpy and the rest, by function symbol.)
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


class Peripherals:
    """UART0 output, SYSTEM clock registers and the RSA accelerator."""

    def __init__(self):
        self.uart = bytearray()
        self.system = dict(SYSTEM_RESET)
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
        }


def instruction_count(code):
    """Instructions in a block of RV32IMC code (compressed ones are 2 bytes)."""
    count, i = 0, 0
    while i + 1 < len(code):
        i += 4 if code[i] & 3 == 3 else 2
        count += 1
    return count


def category(name):
    """Coarse attribution of a function for --profile."""
    if "keccak" in name:
        return "keccak"
    if "kronecker" in name or "esp32_rsa" in name or "volatile" in name:
        return "kronecker+driver"
    if name in ("memset", "memcpy") or "compiler_builtins3mem" in name:
        return "memset/memcpy"
    return "other"


SETS = {1: "LightSaber", 2: "Saber", 3: "FireSaber",
        4: "LightSaber+", 5: "Saber+", 6: "FireSaber+"}
OPS = {1: "KeyGen", 2: "Encaps", 3: "Decaps"}
# Marks of the firmware: operation k/o one-worker 10k + o, two-worker 100 + 10k + o (o = 4: the
# end); inside a two-worker operation InTurn::join marks worker 1's start, worker 2's start and
# the end of both.
SPLIT_BASE = 100
WORKER_1, WORKER_2, JOINED = 1001, 1002, 1003
# The hand-off of the default `TwoWorkers` (two entries), and the others reported.
DEFAULT_SLOTS = 2
SLOT_CHOICES = (1, 2, 4)


def critical_path(published, taken, worker1, worker2, slots):
    """Instructions from the join until both workers are done, if they ran at once.

    `published[k]`: worker 1's own instructions when it starts handing over entry k;
    `taken[k]`: worker 2's own instructions when it asks for entry k (both measured with the
    workers taking turns, so neither waited); `worker1`, `worker2`: their totals. Both workers
    run at one instruction per cycle. Entry k is available once worker 1 has published it;
    worker 1 may publish it only once worker 2 has taken entry k - slots (the ring is full
    until then). Returns (critical path, worker 1's waits, worker 2's waits)."""
    ready = []  # global time entry k is published
    done = []  # global time entry k is taken
    stall1 = stall2 = 0
    for k, (p, q) in enumerate(zip(published, taken)):
        at = p + stall1
        if k >= slots and done[k - slots] > at:
            stall1 += done[k - slots] - at
            at = done[k - slots]
        ready.append(at)
        at = q + stall2
        if ready[k] > at:
            stall2 += ready[k] - at
            at = ready[k]
        done.append(at)
    return max(worker1 + stall1, worker2 + stall2), stall1, stall2


def run(path, profile=False):
    with open(path, "rb") as f:
        elf = ELFFile(f)
        symtab = list(elf.get_section_by_name(".symtab").iter_symbols())
        symbols = {s.name: s["st_value"] for s in symtab}
        functions = sorted((s["st_value"], category(s.name)) for s in symtab
                           if s["st_info"]["type"] == "STT_FUNC" and s["st_size"] > 0)
        segments = [(s["p_vaddr"], s.data()) for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
        entry = elf.header["e_entry"]
        handoff = {kind: [s["st_value"] for s in symtab
                          if s["st_info"]["type"] == "STT_FUNC" and "Handoff" in s.name
                          and kind in s.name]
                   for kind in ("publish", "4take")}

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
    for kind, addresses in handoff.items():
        for address in addresses:
            uc.hook_add(UC_HOOK_CODE, lambda uc, a, s, k: events.append((k, executed[0])),
                        "publish" if kind == "publish" else "take", begin=address, end=address)
    exit_at = symbols["emu_exit"]
    try:
        uc.emu_start(entry, exit_at, timeout=900 * 1_000_000)
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
    for k, name in SETS.items():
        for o, op in OPS.items():
            start, end = by_id.get(10 * k + o), by_id.get(10 * k + o + 1)
            if not start or not end:
                continue
            before, after = start[2], end[2]
            words = Counter(after["by_words"])
            words.subtract(before["by_words"])
            report["operations"].append({
                "set": name, "operation": op,
                "instructions": end[1] - start[1],
                "multiplications": after["multiplications"] - before["multiplications"],
                "by_words": {int(w): c for w, c in sorted(words.items()) if c},
                "mmio_reads": after["reads"] - before["reads"],
                "mmio_writes": after["writes"] - before["writes"],
                "instructions_by_category": dict(split.get((10 * k + o, 0), {})),
                # Below the caller's stack pointer at the start mark: the operation's own use.
                "stack_bytes": start[4] - (stack_top - end[3]),
            })
    return code, report


def two_worker_report(events, by_id, split):
    """Per two-worker operation: the workers' instructions, stages and critical paths."""
    out = []
    position = {}
    for i, (what, _) in enumerate(events):
        if isinstance(what, int) and what not in position:
            position[what] = i
    for k, name in SETS.items():
        for o, op in OPS.items():
            start, end = SPLIT_BASE + 10 * k + o, SPLIT_BASE + 10 * k + o + 1
            if start not in position or end not in position:
                continue
            inside = events[position[start]:position[end] + 1]
            at = {what: t for what, t in inside if isinstance(what, int)}
            t0, t1, t2, t3, t4 = (at[start], at[WORKER_1], at[WORKER_2], at[JOINED], at[end])
            published = [t - t1 for what, t in inside if what == "publish"]
            taken = [t - t2 for what, t in inside if what == "take"]
            single = by_id.get(10 * k + o + 1, [0, 0])[1] - by_id.get(10 * k + o, [0, 0])[1]
            serial = (t1 - t0) + (t4 - t3)
            paths = {}
            for slots in SLOT_CHOICES:
                path, wait1, wait2 = critical_path(published, taken, t2 - t1, t3 - t2, slots)
                paths[slots] = {"critical_path": serial + path, "worker1_waits": wait1,
                                "worker2_waits": wait2}
            out.append({
                "set": name, "operation": op, "single_worker": single,
                "before_join": t1 - t0, "after_join": t4 - t3,
                "worker1": t2 - t1, "worker2": t3 - t2,
                "entries": len(published),
                # Worker 1: until its first hand-off (seed_A or H(c), and the first entry), then
                # per entry; worker 2: until it first asks for an entry (FO hashes before the
                # products, GenSecret, decryption), between its first and last request (the
                # products), and after the last (last products, packing, the final hashes).
                "worker1_first_entry": published[0] if published else 0,
                "worker1_per_entry": (published[-1] - published[0]) / max(len(published) - 1, 1),
                "worker2_before_first_entry": taken[0] if taken else 0,
                "worker2_between_entries": (taken[-1] - taken[0]) if taken else 0,
                "worker2_after_last_entry": (t3 - t2 - taken[-1]) if taken else 0,
                "paths": paths,
                "worker1_by_category": dict(split.get((start, 1), {})),
                "worker2_by_category": dict(split.get((start, 2), {})),
            })
    return out


def print_two_worker(rows):
    print("\n| set | operation | one worker | worker 1 | worker 2 | outside the join "
          "| worker 1: to 1st entry / per entry | worker 2: to 1st entry / products / after "
          f"| critical path ({DEFAULT_SLOTS} slots) | ratio | waits 1 / 2 "
          "| critical path (1 / 4 slots) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        p = r["paths"][DEFAULT_SLOTS]
        print(f"| {r['set']} | {r['operation']} | {r['single_worker']:,} | {r['worker1']:,} "
              f"| {r['worker2']:,} | {r['before_join'] + r['after_join']:,} "
              f"| {r['worker1_first_entry']:,} / {r['worker1_per_entry']:,.0f} "
              f"| {r['worker2_before_first_entry']:,} / {r['worker2_between_entries']:,} / "
              f"{r['worker2_after_last_entry']:,} | {p['critical_path']:,} "
              f"| {p['critical_path'] / r['single_worker']:.3f} "
              f"| {p['worker1_waits']:,} / {p['worker2_waits']:,} "
              f"| {r['paths'][1]['critical_path']:,} / {r['paths'][4]['critical_path']:,} |")
    if any(r["worker2_by_category"] for r in rows):
        categories = ["keccak", "kronecker+driver", "memset/memcpy", "other"]
        print("\n| set | operation | worker | " + " | ".join(categories) + " |")
        print("|---|---|---|" + "---:|" * len(categories))
        for r in rows:
            for w in (1, 2):
                cells = " | ".join(f"{r[f'worker{w}_by_category'].get(c, 0):,}" for c in categories)
                print(f"| {r['set']} | {r['operation']} | {w} | {cells} |")
    print()
    for r in rows:
        print(f"two-worker,{r['set']},{r['operation']},{r['single_worker']},"
              f"{r['paths'][DEFAULT_SLOTS]['critical_path']}")


def print_report(report):
    print("\n| set | operation | RV32IMC instructions | RSA multiplications (operand words x count) "
          "| MMIO reads / writes | stack (bytes) |")
    print("|---|---|---:|---|---:|---:|")
    for r in report["operations"]:
        sizes = ", ".join(f"{w}x{c}" for w, c in r["by_words"].items())
        print(f"| {r['set']} | {r['operation']} | {r['instructions']:,} | {r['multiplications']} ({sizes}) "
              f"| {r['mmio_reads']:,} / {r['mmio_writes']:,} | {r['stack_bytes']:,} |")
    print(f"\ntotal instructions {report['instructions']:,}; peak stack of the whole firmware "
          f"{report['peak_stack_bytes']:,} bytes (per operation: below the caller's "
          f"stack pointer)")
    if any(r["instructions_by_category"] for r in report["operations"]):
        categories = ["keccak", "kronecker+driver", "memset/memcpy", "other"]
        print("\n| set | operation | " + " | ".join(categories) + " |")
        print("|---|---|" + "---:|" * len(categories))
        for r in report["operations"]:
            cells = " | ".join(f"{r['instructions_by_category'].get(c, 0):,}" for c in categories)
            print(f"| {r['set']} | {r['operation']} | {cells} |")
    print_two_worker(report["two_worker"])


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
