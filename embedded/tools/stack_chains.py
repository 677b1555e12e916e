#!/usr/bin/env python3
"""Static worst-case stack chain below a function, from `llvm-objdump -d -C` output.

Usage: stack_chains.py DISASSEMBLY ROOT_REGEX [COUNT [THROUGH_REGEX]]

For each function matching ROOT_REGEX, prints the deepest call chain (direct calls and tail
calls, including RISC-V `auipc` + `jalr`/`jr` pairs, which llvm-objdump annotates with their
target; indirect calls are not followed; panic paths ignored) with each frame's size: prologue
`addi sp`/`lui+sub sp` on RISC-V, `push`/`vpush`/`sub sp` on ARM. The harness measures the
true peak by stack painting; this shows where it goes.
Get the disassembly with `llvm-objdump` from `rustup component add llvm-tools`, e.g.
  $(rustc --print sysroot)/lib/rustlib/x86_64-unknown-linux-gnu/bin/llvm-objdump -d -C --no-show-raw-insn \
      embedded/target/cortex-m4/thumbv7em-none-eabihf/release/saber-embedded > arm.dis
  embedded/tools/stack_chains.py arm.dis 'run_one::.*closure' 300
(the harness's measuring closures, which inline keypair_into / encapsulate_into; pick the
instances whose chain reaches the backend of interest). With THROUGH_REGEX, the deepest chain
that passes through a function matching it (e.g. 'mul_acc' for the chain into the products).
"""
import re,sys,functools
dis, root_pat = sys.argv[1], sys.argv[2]
funcs={}; order=[]
cur=None
for line in open(dis):
    m=re.match(r'^([0-9a-f]+) <(.*)>:',line)
    if m:
        cur=m.group(2); funcs[cur]={'frame':0,'calls':set(),'regs':{}}; order.append(cur); continue
    if not cur: continue
    f=funcs[cur]; regs=f['regs']
    m=re.search(r'\taddi\tsp, sp, -0x([0-9a-f]+)',line)
    if m: f['frame']+=int(m.group(1),16); continue
    m=re.search(r'\tlui\t(\w+), 0x([0-9a-f]+)',line)
    if m: regs[m.group(1)]=int(m.group(2),16)<<12; continue
    m=re.search(r'\taddi\t(\w+), (\w+), (-?0x[0-9a-f]+|-?\d+)',line)
    if m and m.group(2) in regs: regs[m.group(1)]=regs[m.group(2)]+int(m.group(3),0); continue
    m=re.search(r'\tsub\tsp, sp, (\w+)$',line.rstrip())
    if m and m.group(1) in regs: f['frame']+=regs[m.group(1)]; continue
    # Immediates in hex or (newer llvm-objdump) decimal.
    m=re.search(r'\tsub(?:\.w|w)?\tsp, (?:sp, )?#(0x[0-9a-f]+|\d+)',line)
    if m: f['frame']+=int(m.group(1),0); continue
    m=re.search(r'\tpush(?:\.w)?\t\{([^}]*)\}',line)
    if m: f['frame']+=4*len(m.group(1).split(',')); continue
    m=re.search(r'\tvpush\t\{([^}]*)\}',line)
    if m: f['frame']+=8*len(m.group(1).split(',')); continue
    m=re.search(r'\t(?:bl|blx|b\.w|b|jal|jalr|c\.jal|c\.jalr|j|jr|c\.j|c\.jr|tail|call)\t.*<([^>+]+)>',line)
    if m and m.group(1)!=cur and 'panic' not in m.group(1) and 'slice_index_fail' not in m.group(1) and 'unwrap_failed' not in m.group(1): f['calls'].add(m.group(1))
sys.setrecursionlimit(10000)
through=re.compile(sys.argv[4]) if len(sys.argv)>4 else None
@functools.lru_cache(None)
def worst(fn, depth=0, need=True):
    """Deepest chain below fn; with `need`, only chains reaching a THROUGH function count."""
    f=funcs.get(fn)
    if not f or depth>60: return (0,[]) if not (need and through) else (-1,[])
    if need and through and through.search(fn): need=False
    best=(0,[]) if not (need and through) else (-1,[])
    for c in f['calls']:
        w=worst(c, depth+1, need)
        if w[0]>best[0]: best=w
    if best[0]<0: return best
    return (f['frame']+best[0], [(fn,f['frame'])]+best[1])
short=lambda n: re.sub(r'::h[0-9a-f]{16}','',n).replace('$LT$','<').replace('$GT$','>').replace('$u20$',' ').replace('$C$',',').replace('..','::')[:110]
roots=[n for n in order if re.search(root_pat,n)]
for r in roots[:int(sys.argv[3]) if len(sys.argv)>3 else 4]:
    total,path=worst(r)
    print(f"== {short(r)}: {total} B")
    for fn,fr in path: print(f"   {fr:6d}  {short(fn)}")
