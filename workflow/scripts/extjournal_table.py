#!/usr/bin/env python3
# The ATC'13 external-journal (E) table of docs/results/atc13.md from the traces the workflow
# made (workflow rule extjournal_cell, once scripts/extjournal.sh): B = the ext4 trace through the card profile; E = the ext4-extjournal trace with the
# filesystem's device through the card profile and the journal through galaxy-s5 (joj replay
# --device-for), next to the journal as a partition of the card and two cards.
# Usage: extjournal_table.py TRACES [CARD-PROFILE]   |   extjournal_table.py --variants DIR
#   --variants writes the sensitivity variants of sdcard-2013 (one timing field changed) to DIR.
import glob, json, os, subprocess, sys
J=os.environ.get('JOJ','./target/debug/joj')
HERE=os.path.dirname(os.path.abspath(__file__))
if sys.argv[1] == '--variants':
    base=json.load(open(os.path.join(HERE,'..','crates','joj-device','profiles','sdcard-2013.json')))
    os.makedirs(sys.argv[2], exist_ok=True)
    for name, t in [('sd-prog1300', dict(program_page_ns=1300000)),
                    ('sd-prog10000', dict(program_page_ns=10000000)),
                    ('sd-fastseq', dict(program_page_ns=940000, command_overhead_ns=2840000)),
                    ('sd-cmd500', dict(command_overhead_ns=500000))]:
        p=json.loads(json.dumps(base)); p['name']=name; p['timing'].update(t)
        p['description']='sensitivity variant of sdcard-2013: '+json.dumps(t)
        json.dump(p, open(os.path.join(sys.argv[2], name+'.json'),'w'), indent=1)
    sys.exit(0)
T=sys.argv[1]
def trace(fs,call,op):
    return glob.glob(f'{T}/{fs}-{call}-{op}/*.trace.jsonl')[0]
def one(tr, profile):
    out=subprocess.run(['nice','-n','19',J,'replay',tr,'--device',profile,'--json'],capture_output=True,text=True,check=True).stdout
    return json.loads(out)['device']['modeled_ops_per_sec']
def two(tr, main, jnl, extra=()):
    out=subprocess.run(['nice','-n','19',J,'replay',tr,'--device-for','main='+main,'--device-for','journal='+jnl,*extra,'--json'],capture_output=True,text=True,check=True).stdout
    return json.loads(out)['host']['modeled_ops_per_sec']
def parts(tr, profile):
    out=subprocess.run(['nice','-n','19',J,'replay',tr,'--device',profile,'--partitions','--json'],capture_output=True,text=True,check=True).stdout
    return json.loads(out)['device']['modeled_ops_per_sec']
sd=sys.argv[2] if len(sys.argv)>2 else 'sdcard-2013'
emmc='galaxy-s5'
paper={('fsync','insert'):(39,51),('fsync','update'):(102,143),('fdatasync','insert'):(46,None),('fdatasync','update'):(156,None)}
print(f'profile {sd}')
print('call      op      B(sd)  E(sd+emmc)  E/B   | E(one sd, partitions) | E(sd+sd) | paper B  E  E/B')
for call in ['fsync','fdatasync']:
    for op in ['insert','update']:
        b=one(trace('ext4',call,op), sd)
        te=trace('ext4-extjournal',call,op)
        e=two(te, sd, emmc)
        ep=parts(te, sd)
        ess=two(te, sd, sd, ['--same-device-ok'])
        pb,pe=paper[(call,op)]
        ps=f'{pb} {pe} {pe/pb:.2f}' if pe else f'{pb} - -'
        print(f'{call:9} {op:7} {b:6.1f} {e:8.1f} {e/b:6.2f} | {ep:8.1f} ({ep/b:.2f}) | {ess:6.1f} ({ess/b:.2f}) | {ps}')
