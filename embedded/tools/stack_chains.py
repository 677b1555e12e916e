#!/usr/bin/env python3
"""Static worst-case stack chain below a function, from `llvm-objdump -d -C` output.

Usage: stack_chains.py DISASSEMBLY ROOT_REGEX [COUNT [THROUGH_REGEX [SKIP_REGEX]]]

For each function matching ROOT_REGEX, prints the deepest call chain (direct calls and tail
calls; RISC-V `auipc` + `jalr`/`jr` pairs are resolved here, since older llvm-objdump versions
do not annotate their target; indirect calls are not followed; panic paths ignored) with each
frame's size: `addi sp`/`lui+sub sp` on RISC-V, `push`/`vpush`/`sub sp` on ARM, immediates in
decimal or hex. Local labels (`<.L…>`, which llvm-objdump 14 prints inside functions) belong to
the function around them. The harness measures the true peak by stack painting; this shows
where it goes.
Get the disassembly with `llvm-objdump` (the system's, or `rustup component add llvm-tools`):
  llvm-objdump -d -C --no-show-raw-insn embedded/target/run/rv32imc.elf > rv.dis
  embedded/tools/stack_chains.py rv.dis 'run_one::.*closure' 300 'Karatsuba|karatsuba'
The harness's measuring closures inline keypair_into / encapsulate_into / decapsulate_from, so
build an image with one backend and one parameter set (`embedded/run --variants Saber
--backends karatsuba --isa rv32imc`) to keep the chains of other sets and backends out. With
THROUGH_REGEX, the deepest chain that passes through a function matching it (e.g. 'mul_acc'
for the chain into the products). With SKIP_REGEX, functions matching it are left out: the hash
layer picks SHA-3 or AES/SHA-2 at run time, so every set's image carries the 90s code on its
chains (e.g. 'aes|sha2|sha512|Sha2' for a SHA-3 set).
"""
import bisect
import functools
import re
import sys

dis, root_pat = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 4
through = re.compile(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else None
skip = re.compile(sys.argv[5]) if len(sys.argv) > 5 else None

IMM = r'(-?(?:0x[0-9a-f]+|\d+))'
funcs = {}
order = []
starts = []  # (address, name) of every function, in address order
pending = []  # (function, target address) of calls resolved after parsing
cur = None
for line in open(dis):
    m = re.match(r'^([0-9a-f]+) <(.*)>:', line)
    if m:
        if m.group(2).startswith('.L') or m.group(2).startswith('$'):
            continue
        cur = m.group(2)
        funcs[cur] = {'frame': 0, 'calls': set(), 'regs': {}}
        order.append(cur)
        starts.append((int(m.group(1), 16), cur))
        continue
    if not cur:
        continue
    f = funcs[cur]
    regs = f['regs']
    m = re.match(r'^\s*([0-9a-f]+):\s+(?:[0-9a-f]{2,8} )*\s*\t(\S+)\t?(.*)$', line.rstrip())
    if not m:
        continue
    pc, op, args = int(m.group(1), 16), m.group(2), m.group(3)
    if op in ('addi', 'c.addi16sp', 'c.addi'):
        mm = re.match(r'sp, sp, ' + IMM + r'$', args)
        if mm:
            v = int(mm.group(1), 0)
            if v < 0:
                f['frame'] += -v
            continue
        mm = re.match(r'(\w+), (\w+), ' + IMM + r'$', args)
        if mm and mm.group(2) in regs:
            regs[mm.group(1)] = regs[mm.group(2)] + int(mm.group(3), 0)
        continue
    if op == 'lui':
        mm = re.match(r'(\w+), ' + IMM + r'$', args)
        if mm:
            regs[mm.group(1)] = int(mm.group(2), 0) << 12
        continue
    if op == 'auipc':
        mm = re.match(r'(\w+), ' + IMM + r'$', args)
        if mm:
            # The 20-bit immediate is printed unsigned: sign-extend it.
            imm = int(mm.group(2), 0)
            imm = imm - (1 << 20) if imm >= 1 << 19 else imm
            regs[mm.group(1)] = (pc + (imm << 12)) & 0xFFFFFFFF
        continue
    if op in ('sub', 'sub.w') and args.startswith('sp, sp, '):
        rest = args[len('sp, sp, '):]
        mm = re.match(r'#' + IMM, rest)
        if mm:
            f['frame'] += int(mm.group(1), 0)
        elif rest in regs:
            f['frame'] += regs[rest]
        continue
    if op in ('sub', 'sub.w', 'subw') and args.startswith('sp, #'):
        f['frame'] += int(args[len('sp, #'):], 0)
        continue
    if op in ('subw',) and args.startswith('sp, sp, #'):
        f['frame'] += int(args[len('sp, sp, #'):], 0)
        continue
    if op in ('push', 'push.w', 'stmdb', 'stmdb.w') and (op.startswith('push') or args.startswith('sp!')):
        mm = re.search(r'\{([^}]*)\}', args)
        if mm:
            f['frame'] += 4 * len(mm.group(1).split(','))
        continue
    if op == 'vpush':
        mm = re.search(r'\{([^}]*)\}', args)
        if mm:
            regs_list = mm.group(1).split(',')
            n = 0
            for r in regs_list:
                r = r.strip()
                rng = re.match(r'd(\d+)-d(\d+)', r)
                n += (int(rng.group(2)) - int(rng.group(1)) + 1) if rng else 1
            f['frame'] += 8 * n
        continue
    if op in ('jalr', 'jr', 'c.jalr', 'c.jr'):
        # `jalr off(reg)`, `jalr ra, off(reg)`, `jr off(reg)`, `jr reg`
        mm = re.match(r'(?:\w+, )?' + IMM + r'\((\w+)\)$', args)
        if mm and mm.group(2) in regs:
            pending.append((cur, regs[mm.group(2)] + int(mm.group(1), 0)))
        elif args in regs:
            pending.append((cur, regs[args]))
        continue
    if op in ('bl', 'blx', 'b.w', 'b', 'jal', 'c.jal', 'j', 'c.j', 'tail', 'call'):
        mm = re.search(r'0x([0-9a-f]+)', args)
        if mm:
            pending.append((cur, int(mm.group(1), 16)))

addresses = [a for a, _ in starts]
for fn, target in pending:
    i = bisect.bisect_right(addresses, target) - 1
    if i < 0 or addresses[i] != target:
        continue  # a branch inside a function, or an unknown target
    callee = starts[i][1]
    if callee == fn or any(s in callee for s in ('panic', 'slice_index_fail', 'unwrap_failed',
                                                   'slice_end_index', 'slice_start_index')):
        continue
    if skip and skip.search(callee):
        continue
    funcs[fn]['calls'].add(callee)

sys.setrecursionlimit(10000)


@functools.lru_cache(None)
def worst(fn, need, depth=0):
    """The deepest chain below fn: (bytes, [(function, frame)]), through a function matching
    THROUGH_REGEX if `need` (None if there is none)."""
    f = funcs.get(fn)
    if not f or depth > 80:
        return None if need else (0, [])
    hit = need and bool(through.search(fn))
    still = need and not hit
    best = None if still else (0, [])
    for c in f['calls']:
        w = worst(c, still, depth + 1)
        if w is not None and (best is None or w[0] > best[0]):
            best = w
    if best is None:
        return None
    return (f['frame'] + best[0], [(fn, f['frame'])] + best[1])


def short(n):
    n = re.sub(r'::h[0-9a-f]{16}', '', n)
    for a, b in (('$LT$', '<'), ('$GT$', '>'), ('$u20$', ' '), ('$C$', ','), ('$u7b$', '{'),
                 ('$u7d$', '}'), ('$RF$', '&'), ('$BP$', '*'), ('..', '::')):
        n = n.replace(a, b)
    return n[:120]


roots = [n for n in order if re.search(root_pat, n)]
for r in roots[:count]:
    w = worst(r, through is not None)
    if w is None:
        continue
    total, path = w
    print(f"== {short(r)} @{[a for a, n in starts if n == r][0]:x}: {total} B")
    for fn, fr in path:
        print(f"   {fr:6d}  {short(fn)}")
