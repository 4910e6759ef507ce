#!/usr/bin/env python3
"""Records a geo transcript on a real server for the model's replay test.

    geo-transcript.py SOCKET SEED COUNT [polar] > transcript.txt
    SEEDKV_GEO_TRANSCRIPT=transcript.txt \
        cargo test -p seedkv-sim --lib transcript -- --ignored --nocapture

SOCKET is a redis-server unix socket (the script FLUSHALLs it). Each line
is `<command>\t<raw reply in hex>`: GEOADD, lookups, every search form
with STORE, zset reads of the destinations, HELLO 2/3 switches. `polar`
puts the centres and points near the poles and the antimeridian with
radii of 300-1500 km, where Redis's cell walk misses members (the model
must decline those searches, not mispredict them).
"""
import socket, random, sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f=s.makefile('rb')
def raw_read():
    out=b""
    line=f.readline(); out+=line; t=chr(line[0]); r=line[1:-2]
    if t in '$=!':
        n=int(r)
        if n>=0: out+=f.read(n+2)
    elif t in '*~>%':
        n=int(r)
        if t=='%': n*=2
        for _ in range(max(n,0)): out+=raw_read()
    return out
def cmd(args):
    a=[x.encode() for x in args]
    s.sendall(b"".join([b"*%d\r\n"%len(a)]+[b"$%d\r\n%s\r\n"%(len(x),x) for x in a])); return raw_read()
seed=int(sys.argv[2]); n=int(sys.argv[3]); polar=sys.argv[4:]==['polar']; random.seed(seed)
cmd(["FLUSHALL"]); cmd(["HELLO","2"])
def deg(lo,hi): return "%.6f"%random.uniform(lo,hi)
def pos():
    k=random.random()
    if polar: k=0.4+0.55*k
    if k<0.3: return deg(13,14),deg(37.5,38.5)
    if k<0.4: return "%.1f"%random.uniform(13,14),"%.1f"%random.uniform(37.5,38.5)
    if k<0.7: return random.choice([deg(170,180),deg(-180,-170)]),random.choice([deg(75,85.05),deg(-85.05,-75)])
    if k<0.97: return deg(-180,180),deg(-85.05,85.05)
    return deg(179,181),deg(84,86)
def mem(): return "p%d"%random.randrange(400 if polar else 60)
def unit(): return random.choice(["m","km","mi","ft","KM"])
def rad(u):
    km=random.uniform(300,1500) if polar else random.choice([0,random.uniform(1,100),random.uniform(100,1000),random.uniform(1000,20000),random.uniform(1,5000)])
    v={"m":km*1000,"ft":km*3280.84}.get(u.lower(),km)
    return "%.3f"%v
keys=["g0","g1"]; dsts=["d0","d1"]
resp3=False
for i in range(n):
    k=random.choice(keys); r=random.random()
    if r<0.25:
        a=["GEOADD",k]+random.choice([[],[],["NX"],["XX"],["CH"],["XX","CH"]])
        for _ in range(random.randint(1,6)):
            lo,la=pos(); a+= [lo,la,mem()]
    elif r<0.3: a=["GEOPOS",k]+[mem() for _ in range(random.randint(1,3))]
    elif r<0.35: a=["GEODIST",k,mem(),mem()]+random.choice([[],[unit()]])
    elif r<0.4: a=["GEOHASH",k]+[mem() for _ in range(random.randint(1,3))]
    elif r<0.75:
        store=random.random()<0.3
        a=(["GEOSEARCHSTORE",random.choice(dsts),k] if store else ["GEOSEARCH",k])
        if random.random()<0.4: a+=["FROMMEMBER",mem()]
        else:
            lo,la=pos(); a+=["FROMLONLAT",lo,la]
        u=unit()
        if random.random()<0.5: a+=["BYRADIUS",rad(u),u]
        else: a+=["BYBOX",rad(u),rad(u),u]
        if not store:
            for w in ["WITHCOORD","WITHDIST","WITHHASH"]:
                if random.random()<0.3: a.append(w)
        a+=random.choice([[],["ASC"],["DESC"]])
        if random.random()<0.4:
            a+=["COUNT",str(random.randint(1,8))]+random.choice([[],["ANY"]])
        if store and random.random()<0.5: a.append("STOREDIST")
    elif r<0.85:
        bym=random.random()<0.5
        a=[("GEORADIUSBYMEMBER" if bym else "GEORADIUS")+random.choice(["","","_RO"]),k]
        if bym: a.append(mem())
        else:
            lo,la=pos(); a+=[lo,la]
        u=unit(); a+=[rad(u),u]
        store=not a[0].endswith("_RO") and random.random()<0.4
        if not store:
            for w in ["WITHCOORD","WITHDIST","WITHHASH"]:
                if random.random()<0.3: a.append(w)
        a+=random.choice([[],["ASC"],["DESC"]])
        if random.random()<0.4: a+=["COUNT",str(random.randint(1,8))]+random.choice([[],["ANY"]])
        if store: a+=[random.choice(["STORE","STOREDIST"]),random.choice(dsts)]
    elif r<0.93: a=["ZRANGE",random.choice(dsts+keys),"0","-1","WITHSCORES"]
    elif r<0.95: a=["ZREM",k,mem(),mem()]
    elif r<0.96: a=["DEL",k]
    elif r<0.98:
        resp3=not resp3; a=["HELLO","3" if resp3 else "2"]
    else: a=["ZSCORE",random.choice(dsts),mem()]
    rep=cmd(a)
    if a[0]=="HELLO": rep=b"%0\r\n"
    print(" ".join(a)+"\t"+rep.hex())
