//! The generator as it was before plans held their states compactly (2026-11-28): every state
//! built with its list of kept writes, every prefix of every epoch before the budget applied.
//! Quadratic in an epoch's writes, but obviously the stated policy; the plan must choose
//! exactly its states (test `a_plan_chooses_exactly_the_states_of_the_reference_generator`).

use std::collections::HashSet;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{CrashState, Epoch, MAX_ENUMERATED_WRITES, Shares, StateKind, Torn, kind_of, shuffle};

/// The states of `epochs` to check within `budget`, chosen from `seed`, and whether they are
/// all there are.
pub fn plan(epochs: &[Epoch], budget: usize, seed: u64) -> (Vec<CrashState>, bool) {
    let mut all = Vec::new();
    let mut fits = true;
    for (i, e) in epochs.iter().enumerate() {
        match all_states(i as u32, e) {
            Some(s) if all.len() + s.len() <= budget => all.extend(s),
            _ => {
                fits = false;
                break;
            }
        }
    }
    if fits {
        let mut seen = HashSet::new();
        all.retain(|s| seen.insert((s.epoch, s.kept.clone(), s.torn)));
        return (sorted(all), true);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xc4a5_5a7e);
    let prefix = |e: u32, j: usize, kind| CrashState {
        epoch: e,
        kept: (0..j as u32).collect(),
        torn: None,
        kind,
    };
    let mut boundary: Vec<CrashState> = epochs
        .iter()
        .enumerate()
        .map(|(i, e)| prefix(i as u32, e.writes.len(), StateKind::FlushBoundary))
        .chain(
            (epochs.iter().enumerate())
                .filter(|(_, e)| !e.writes.is_empty())
                .map(|(i, _)| prefix(i as u32, 0, StateKind::AfterFlush)),
        )
        .collect();
    let mut prefixes: Vec<CrashState> = epochs
        .iter()
        .enumerate()
        .flat_map(|(i, e)| (1..e.writes.len()).map(move |j| (i, j)))
        .map(|(i, j)| prefix(i as u32, j, StateKind::Prefix))
        .collect();
    let shares = Shares::of(budget);
    let boundary_share = boundary.len().min(shares.boundary);
    let prefix_share = prefixes.len().min(shares.prefix);
    let flying = in_flight_states(epochs, budget - boundary_share - prefix_share, &mut rng);
    let unused = budget - boundary_share - prefix_share - flying.len();
    let boundary_take = boundary.len().min(boundary_share + unused);
    let unused = unused - (boundary_take - boundary_share);
    let prefix_take = prefixes.len().min(prefix_share + unused);
    shuffle(&mut boundary, &mut rng);
    shuffle(&mut prefixes, &mut rng);
    boundary.truncate(boundary_take);
    prefixes.truncate(prefix_take);
    let mut states = boundary;
    states.extend(prefixes);
    states.extend(flying);
    (sorted(states), false)
}

fn all_states(epoch: u32, e: &Epoch) -> Option<Vec<CrashState>> {
    let w = e.writes.len();
    if w > MAX_ENUMERATED_WRITES {
        return None;
    }
    let mut out = Vec::new();
    for mask in 0u32..(1 << w) {
        let kept: Vec<u32> = (0..w as u32).filter(|i| mask & (1 << i) != 0).collect();
        let kind = kind_of(&kept, None, w);
        out.push(CrashState {
            epoch,
            kept,
            torn: None,
            kind,
        });
    }
    for (i, wr) in e.writes.iter().enumerate() {
        for t in 1..wr.sectors {
            let prefix: Vec<u32> = (0..=i as u32).collect();
            let others: Vec<u32> = (0..w as u32).collect();
            for kept in [prefix, others] {
                out.push(CrashState {
                    epoch,
                    kept,
                    torn: Some(Torn {
                        write: i as u32,
                        sectors: t,
                    }),
                    kind: StateKind::Torn,
                });
            }
        }
    }
    Some(out)
}

fn in_flight_states(epochs: &[Epoch], wanted: usize, rng: &mut ChaCha8Rng) -> Vec<CrashState> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut push = |s: CrashState, out: &mut Vec<CrashState>| {
        if out.len() < wanted
            && s.kind.in_flight()
            && seen.insert((s.epoch, s.kept.clone(), s.torn))
        {
            out.push(s);
        }
    };
    loop {
        let before = out.len();
        for s in random_states(epochs, wanted.saturating_sub(before), rng) {
            push(s, &mut out);
        }
        if out.len() == before || out.len() >= wanted {
            break;
        }
    }
    let mut order: Vec<usize> = (0..epochs.len()).collect();
    shuffle(&mut order, rng);
    for i in order {
        if out.len() >= wanted {
            break;
        }
        for s in all_states(i as u32, &epochs[i]).unwrap_or_default() {
            push(s, &mut out);
        }
    }
    out
}

fn random_states(epochs: &[Epoch], wanted: usize, rng: &mut ChaCha8Rng) -> Vec<CrashState> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let weights: Vec<usize> = epochs.iter().map(|e| e.writes.len()).collect();
    let total: usize = weights.iter().sum();
    let mut attempts = 0usize;
    while out.len() < wanted && total > 0 && attempts < wanted.saturating_mul(20) {
        attempts += 1;
        let mut pick = rng.random_range(0..total);
        let ei = weights
            .iter()
            .position(|&w| {
                if pick < w {
                    true
                } else {
                    pick -= w;
                    false
                }
            })
            .expect("pick < total");
        let e = &epochs[ei];
        let kept: Vec<u32> = (0..e.writes.len() as u32)
            .filter(|_| rng.random_bool(0.5))
            .collect();
        let tearable: Vec<u32> = kept
            .iter()
            .copied()
            .filter(|&i| e.writes[i as usize].sectors > 1)
            .collect();
        let torn = (!tearable.is_empty() && rng.random_bool(0.5)).then(|| {
            let write = tearable[rng.random_range(0..tearable.len())];
            let sectors = rng.random_range(1..e.writes[write as usize].sectors);
            Torn { write, sectors }
        });
        let kind = kind_of(&kept, torn, e.writes.len());
        let s = CrashState {
            epoch: ei as u32,
            kept,
            torn,
            kind,
        };
        if seen.insert((s.epoch, s.kept.clone(), s.torn)) {
            out.push(s);
        }
    }
    out
}

fn sorted(mut states: Vec<CrashState>) -> Vec<CrashState> {
    states.sort_by_key(|s| s.epoch);
    states
}
