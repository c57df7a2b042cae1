"""massif-diff.py OUTDIR N: heap growth per held connection by allocation site, from massif-idle.sh's snapshots."""
import re,sys
N=int(sys.argv[2]); D=sys.argv[1]
def parse(f):
    d={}; stack=[]
    for l in open(f):
        m=re.match(r'^( *)n\d+: (\d+) (.*)$', l.rstrip('\n'))
        if not m: continue
        depth=len(m.group(1)); b=int(m.group(2)); name=re.sub(r'0x[0-9A-F]+: ','',m.group(3))
        name=re.sub(r'\(in [^)]*\)','',name).strip()
        stack=stack[:depth]+[name]
        if depth==4: d[' <- '.join(stack[1:5])]=d.get(' <- '.join(stack[1:5]),0)+b
    return d
b=parse(D+'/before.txt'); a=parse(D+'/after.txt')
for diff,k in sorted([(a.get(k,0)-b.get(k,0),k) for k in set(a)|set(b)],reverse=True):
    if diff>N*4: print(f"{diff/N:7.1f} {k[:260]}")
