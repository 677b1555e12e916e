#!/usr/bin/env python3
"""Instructions per function of each measured operation, from a QEMU instruction trace.

Usage: profile.py HARNESS_STDOUT [TOP] < TRACE

TRACE is QEMU's `-d exec,nochain` log with one instruction per translation block
(`-accel tcg,one-insn-per-tb=on`), so that every line is one executed instruction and names
its function (QEMU looks the address up in the ELF's symbols). The harness's `measure` paints
the stack, runs the operation and scans the paint: the instructions between the end of
`paint` and the start of `lowest_touched` are the operation's, and the k-th such window is the
k-th `begin` line of HARNESS_STDOUT. Prints, per operation, the total and the TOP functions
(default 25) by instructions executed in their own code (callees counted apart; inlined code
counts where it was inlined); the library's memory leaves (memcpy, memset) are listed again per
caller (`leaf <- caller` lines, not added to the total). Example (Cortex-M4, one backend, one parameter set):

  SABER_EMBEDDED_BACKENDS=ntt-merged SABER_EMBEDDED_VARIANTS=Saber cargo build --release \
      --target thumbv7em-none-eabihf   # in embedded/, or reuse an image of ./run
  qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -nographic -accel tcg,one-insn-per-tb=on \
      -semihosting-config enable=on,target=native,arg=saber-embedded,arg=skip=0,arg=noshared \
      -d exec,nochain -kernel saber-embedded.elf 2> >(embedded/tools/profile.py out.txt > prof.txt) > out.txt
(the trace is read as it is produced; `out.txt` must be complete when the trace ends, which it
is when QEMU exits).
"""
import collections
import re
import subprocess
import sys


def main():
    stdout_path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    trace = re.compile(r'\[[0-9a-f]+/([0-9a-f]+)/[0-9a-f]+/[0-9a-f]+\] ?(.*)$')
    segments = []
    state = 'idle'
    counts = None
    # Library leaves (memcpy, memset, ...) are also counted per caller: the function executing
    # just before a run of their instructions.
    leaf = re.compile(r'__aeabi_mem|^mem(cpy|set|move)$|compiler_builtins.*mem')
    previous, caller = None, None
    for line in sys.stdin:
        m = trace.search(line)
        if not m:
            continue
        sym = m.group(2).strip() or m.group(1)
        if 'lowest_touched' in sym:
            if state == 'measuring':
                segments.append(counts)
            state = 'idle'
        elif 'paint' in sym and 'bare' in sym or sym.endswith('5paint'):
            state = 'painting'
        elif state == 'painting':
            state = 'measuring'
            counts = collections.Counter()
        if state == 'measuring':
            counts[sym] += 1
            if leaf.search(sym):
                if previous is not None and not leaf.search(previous):
                    caller = previous
                counts[f'{sym} <- {caller}'] += 1
        previous = sym
    begins = [l.strip().split(',')[1:] for l in open(stdout_path) if l.startswith('begin,')]
    names = sorted({part for c in segments for s in c for part in s.split(' <- ')})
    demangled = dict(zip(names, demangle(names)))
    name_of = lambda s: ' <- '.join(demangled.get(p, p) for p in s.split(' <- '))
    for k, c in enumerate(segments):
        what = ','.join(begins[k][:5]) if k < len(begins) else f'segment {k}'
        total = sum(n for s, n in c.items() if ' <- ' not in s)
        print(f'== {what}: {total} instructions')
        for sym, n in c.most_common(top):
            print(f'{n:>10}  {short(name_of(sym))}')


def demangle(names):
    try:
        out = subprocess.run(['c++filt'], input='\n'.join(names), capture_output=True,
                             text=True, check=True).stdout.split('\n')
        return out[:len(names)]
    except (OSError, subprocess.CalledProcessError):
        return names


def short(name):
    return re.sub(r'::h[0-9a-f]{16}', '', name)[:150]


if __name__ == '__main__':
    main()
