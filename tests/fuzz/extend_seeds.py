#!/usr/bin/env python3
"""Write the seed corpus of fuzz_extend (tests/fuzz/corpus/extend/): call
sequences in the encoding that tests/fuzz/fuzz_extend.c decodes (one byte for
the world, then an opcode byte and its arguments per operation). Build the
target with -DFUZZ_TRACE to see every call a seed makes and its status.
    python3 tests/fuzz/extend_seeds.py tests/fuzz/corpus/extend
"""
import struct, os, sys
out = sys.argv[1]
T = {'0':0,'-0':1,'1':2,'-1':3,'0.5':4,'1/60':5,'1e-6':6,'9.9e-7':7,'1e-30':8,'1e-40':9,'1e-45':10,
     '1000':11,'1000.5':12,'1e5':13,'1e9':14,'1.1e9':15,'1e18':16,'2e18':17,'3e38':18,'nan':19,'inf':20,
     '-inf':21,'10':22,'5000':23,'-5000':24,'100':25,'0.3':26,'2':27,'-10':28,'0.05':29,'3':30,'0.2':31}
def f(v):
    if isinstance(v, str): return [T[v]]
    return [0xf0] + list(struct.pack('<f', v))
def c(v):  # an integer coordinate in [-16, 15]
    assert -16 <= v <= 15; return [v + 16]
N = {'position.x':0,'desired.x':15,'u0':18,'u1':19,'u2':20,'u.vec':21,'':23,'31':26,'32':27,'bad':28,'null':30,'group':14}
def agent(flags, x, y, tx, ty, radius=None, speed=None, th=None, z=None):
    b = [0, flags] + c(x) + c(y) + (c(z) if z is not None else [])
    if flags & 0x40: b += f(radius)
    if flags & 0x80: b += f(speed)
    b += c(tx) + c(ty)
    if flags & 0x02 and flags & 0x20: b += f(th[0]) + f(th[1])
    return b
def bulk(count, flags=0): return [1, ((count + 1) % 14) | flags]
def comp(name, typ, width, dflt=False): return [3, typ | (0x80 if dflt else 0), N[name], width]
def column(name, write=None):
    b = [4, N[name], 0]
    if write: b += list(write)
    return b
def serial(mode, stage, fresh=True): return [5, mode << 1, stage + 1, 4 if fresh else 3]
def parallel(mode, filt, stage, min_block=1): return [5, 1 | (mode << 1) | (filt << 3), stage + 1, 4, min_block]
def wall(pts, closed=0):
    b = [6, closed, len(pts)]
    for x, y in pts: b += c(x) + c(y)
    return b
def zigzag(n, span, closed=0): return [6, 0x80 | closed, round(((n - 2) * 15) ** 0.5)] + f(span)
def step(dt): return [9] + f(dt)
def snap(b): return [10, b]
def rows(): return [12, 0]
def tele(h, p, v=('0', '0'), heading='0'):
    return [11, 1, h] + c(p[0]) + c(p[1]) + c(0) + f(v[0]) + f(v[1]) + f(heading)
def seed(name, ops, world=0):
    b = bytes([world] + [x for op in ops for x in op])
    open(os.path.join(out, name), 'wb').write(b); print(name, len(b))
box = [(-5, -5), (5, -5), (5, 5), (-5, 5)]
seed('components-systems-2d', [agent(0x0f, -3, 0, 10, 0), agent(0x0f, 3, 0, -10, 0), bulk(6),
     comp('u0', 1, 3, True), comp('u1', 4, 2), comp('u0', 1, 1), comp('32', 1, 1), comp('u2', 2, 17),
     serial(0, 1), serial(1, 1), serial(3, 5), serial(4, 3), parallel(0, 0, 1), parallel(1, 0, 4),
     parallel(2, 1, 1), column('u0', (7, 3)), column('position.x'), column('bad'), column('null'),
     step('1/60'), rows(), step('0.05'), snap(0), snap(2), rows(), step('1/60'), [2, 1, 0], [2, 0, 3, 0, 0, 1],
     step('1/60'), rows()])
seed('components-systems-3d', [agent(0x05, -3, 0, 10, 0, z=1), bulk(5), comp('u.vec', 3, 16, True),
     serial(2, 2), parallel(2, 0, 3), parallel(0, 1, 1), column('u.vec', (1, 9)), column('desired.x'),
     step('1/60'), snap(3), step('1000'), rows(), [11, 1, 0] + c(1) + c(2) + c(3) + f('1e9') + f('0') + f('0')], world=1)
seed('steps-bad-dt', [agent(0x07, 0, 0, 5, 0), wall([(1, -5), (1, 5)]), step('0'), step('-0'), step('-1'),
     step('nan'), step('inf'), step('1e-40'), step('1e-45'), step('9.9e-7'), step('1000.5'), step('1e-6'),
     step('1000'), step('1/60'), rows()])
seed('zigzag-4100-crowd', [zigzag(4100, 10000.0), agent(0x07, 10, -10, 15, -15),
     agent(0x07, 12, -10, 15, -16), agent(0x07, 10, -12, 14, -16), step('0.05'), snap(0), step('1/60')])
seed('zigzag-616-closed-reloaded', [zigzag(616, 1e6, 1), agent(0x07, 0, 0, 15, 15), agent(0x07, 1, 0, -15, 15),
     step('0.05'), snap(2), step('1/60'), [7, 2], step('1/60')])
seed('contacts-max-speed-1e5', [agent(0x85, -1, 0, 15, 0, speed='1e5'), agent(0x85, 1, 0, -16, 0, speed='1e5'),
     step('0.05'), step('1/60'), agent(0x85, 0, 2, 0, -16, speed='1e9'), step('1'), rows()])
seed('tiny-radius-horizon-box', [wall(box, 1), agent(0x67, 0, 0, 15, 15, radius='1e-30', th=('1e-30', '1e-30')),
     agent(0x67, 1, 1, 15, 15, radius='1e-30', th=('1e-30', '1e-30')),
     agent(0xa7, -1, -1, -15, 15, speed='1e9', th=('1e-30', '1')), step('0.5'), step('1e-6'), step('1000'), rows()])
seed('walls-obstacles-removed', [wall(box, 1), wall([(0, 0), (0, 0)]), wall([(0, 0)]), [6, 0x40, 0], [6, 2, 3] + c(0)*6,
     [8, 0] + c(2) + c(2) + c(0) + f('1'), [8, 2] + c(-2) + c(2) + c(0) + f('0.5') + f('1') + f('0'),
     [8, 0] + c(0) + c(0) + c(0) + f('nan'), [8, 3], [8, 1], [7, 2], [7, 2], [7, 0], [7, 11],
     agent(0x07, 0, 0, 10, 10), step('1/60'), rows()])
seed('bulk-handles-teleport', [bulk(8), bulk(3, 0x80) + [4] + f('nan'), bulk(0), bulk(-1), [2, 0, 3, 0, 0, 0],
     [2, 0, 2, 0xf0, 0xf9], [2, 1, 0xfa], tele(0, (3, 3), ('1e9', '0')), tele(1, (3, 3), ('nan', '0')),
     [11, 8, 3, 0, 1, 2], [11, 0x18, 2, 0, 1], [11, 2, 2, 0, 1, 5] + f('inf'), step('1/60'), [2, 0, 4, 0, 1, 2, 3],
     rows(), [12, 1, 8, 90], [12, 1, 0, 0], snap(1), [13, 0x41], [13, 0x60], [13, 3], step('1/60')])
