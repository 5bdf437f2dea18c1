//! What a part may hold ([`check`]), checked when `joj crash merge` reads it: the bounds that
//! `--shard` parsing and a fresh run keep, so that no number a part gives sizes an allocation
//! or a loop beyond what the run it claims to be would make. A part is an input anyone can
//! write (docs/formats/crash-part.md); this check comes before any of its numbers is used.

use super::error::PartFault;
use super::jbd2::{Journal, Replay};
use super::share::{MAX_SHARDS, Shard};

/// What a part says of one of its images' journal replay.
#[derive(Debug, Clone, Copy)]
pub struct ImageReplay<'a> {
    /// `outcome.replay`.
    pub replay: Option<&'a Replay>,
    /// How many `home_blocks` the image lists.
    pub home_blocks_listed: usize,
}

/// Checks a part's `shard`, its `journal` and its images' replays (`images`, in order) against
/// what a run writes: 1 ≤ K ≤ N ≤ [`MAX_SHARDS`]; a journal [`Journal::check`] accepts; a
/// replay only with a journal, its superblock fields 32-bit, its reads within the journal's
/// blocks, its transactions and home blocks within its reads, and as many home blocks listed
/// as it writes.
pub fn check<'a>(
    shard: Shard,
    journal: Option<&Journal>,
    images: impl IntoIterator<Item = ImageReplay<'a>>,
) -> Result<(), PartFault> {
    let Shard { k, n } = shard;
    if k == 0 || k > n || n > MAX_SHARDS {
        return Err(PartFault::Shard {
            k,
            n,
            max: MAX_SHARDS,
        });
    }
    let blocks = journal
        .map(Journal::check)
        .transpose()
        .map_err(PartFault::Journal)?;
    for (image, i) in images.into_iter().enumerate() {
        let Some(r) = i.replay else {
            continue;
        };
        let Some(blocks) = blocks else {
            return Err(PartFault::ReplayWithoutJournal { image });
        };
        let u32_max = u64::from(u32::MAX);
        let superblock = "a 32-bit field of the journal superblock";
        for (field, value, max, why) in [
            ("start", r.start, u32_max, superblock),
            ("first", r.first, u32_max, superblock),
            ("maxlen", r.maxlen, u32_max, superblock),
            (
                "journal_blocks_read",
                r.journal_blocks_read,
                blocks,
                "the journal's blocks, more than which no scan reads",
            ),
            (
                "transactions",
                r.transactions,
                r.journal_blocks_read,
                "its journal blocks read, each transaction's commit block one of them",
            ),
            (
                "home_blocks_written",
                r.home_blocks_written,
                r.journal_blocks_read,
                "its journal blocks read, each home block's copy one of them",
            ),
        ] {
            if value > max {
                return Err(PartFault::ReplayCount {
                    image,
                    field,
                    value,
                    max,
                    why,
                });
            }
        }
        if i.home_blocks_listed as u64 != r.home_blocks_written {
            return Err(PartFault::HomeBlocks {
                image,
                listed: i.home_blocks_listed,
                written: r.home_blocks_written,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::jbd2::{JournalShapeError, MAX_JOURNAL_BLOCKS, Run};
    use super::*;

    /// The journal of the probe's part: 1,024 blocks in three runs, as mke2fs lays out a
    /// 64 MiB ext4.
    fn journal() -> Journal {
        let run = |logical, physical, blocks| Run {
            logical,
            physical,
            blocks,
        };
        Journal {
            runs: vec![run(0, 15, 10), run(10, 26, 15), run(25, 1066, 999)],
        }
    }

    /// The probe's replay: 8 transactions, 46 journal blocks read, 29 home blocks.
    fn replay() -> Replay {
        Replay {
            start: 1,
            first: 1,
            maxlen: 1024,
            transactions: 8,
            journal_blocks_read: 46,
            home_blocks_written: 29,
            home_blocks: Vec::new(),
        }
    }

    fn image(r: &Replay) -> ImageReplay<'_> {
        ImageReplay {
            replay: Some(r),
            home_blocks_listed: r.home_blocks_written as usize,
        }
    }

    const ONE: Shard = Shard { k: 1, n: 1 };

    /// The check of a part of two images, the probe's and the probe's after `edit`.
    fn with_edited(edit: impl FnOnce(&mut Replay)) -> Result<(), PartFault> {
        let (good, mut edited) = (replay(), replay());
        edit(&mut edited);
        let listed = ImageReplay {
            home_blocks_listed: 29,
            ..image(&edited)
        };
        check(ONE, Some(&journal()), [image(&good), listed])
    }

    #[test]
    fn a_part_as_a_run_writes_it_passes() {
        let (r, clean) = (replay(), Replay::default());
        assert_eq!(check(ONE, Some(&journal()), [image(&r), image(&r)]), Ok(()));
        assert_eq!(check(ONE, Some(&journal()), [image(&clean)]), Ok(()));
        let none = ImageReplay {
            replay: None,
            home_blocks_listed: 0,
        };
        assert_eq!(check(Shard { k: 3, n: 3 }, None, [none]), Ok(()));
    }

    #[test]
    fn a_shard_beyond_what_shard_parsing_takes_is_refused() {
        let max = Shard {
            k: MAX_SHARDS,
            n: MAX_SHARDS,
        };
        assert_eq!(check(max, None, []), Ok(()));
        for (k, n) in [
            (1, u32::MAX),
            (1, 50_000_000),
            (1, MAX_SHARDS + 1),
            (0, 3),
            (4, 3),
        ] {
            let e = check(Shard { k, n }, None, []).unwrap_err();
            assert_eq!(
                e,
                PartFault::Shard {
                    k,
                    n,
                    max: MAX_SHARDS
                }
            );
            assert!(e.to_string().contains("10000"), "{e}");
        }
    }

    #[test]
    fn a_journal_with_a_gap_or_beyond_its_bounds_is_refused() {
        let one = |logical, physical, blocks| Journal {
            runs: vec![Run {
                logical,
                physical,
                blocks,
            }],
        };
        let fault = |j: Journal| match check(ONE, Some(&j), []) {
            Err(PartFault::Journal(e)) => e,
            other => panic!("{j:?}: {other:?}"),
        };
        // The probe's: a run that starts at journal block 5 (the model's mount panicked).
        assert!(matches!(
            fault(one(5, 0, 3)),
            JournalShapeError::Gap {
                run: 0,
                logical: 5,
                expected: 0
            }
        ));
        let mut gap = journal();
        gap.runs[2].logical = 26;
        assert!(matches!(fault(gap), JournalShapeError::Gap { run: 2, .. }));
        // The probe's: 500,000 blocks (4 GB of the model's memory) in a 4.8 KB part.
        assert!(matches!(
            fault(one(0, 0, 500_000)),
            JournalShapeError::TooLarge {
                max: MAX_JOURNAL_BLOCKS,
                ..
            }
        ));
        assert!(matches!(
            fault(one(0, 0, u64::MAX)),
            JournalShapeError::TooLarge { .. }
        ));
        assert!(matches!(
            fault(one(0, u64::MAX - 1, 8)),
            JournalShapeError::BeyondDevice { run: 0, .. }
        ));
        assert!(matches!(
            fault(one(0, 15, 0)),
            JournalShapeError::EmptyRun { run: 0 }
        ));
        assert!(matches!(
            fault(Journal { runs: Vec::new() }),
            JournalShapeError::NoRuns
        ));
        let largest = one(0, 15, MAX_JOURNAL_BLOCKS);
        assert_eq!(check(ONE, Some(&largest), []), Ok(()));
    }

    #[test]
    fn replay_counts_beyond_the_journal_or_their_reads_are_refused() {
        // The probe's: 10^18 journal blocks read (the mount model's loop never ended).
        let e = with_edited(|r| r.journal_blocks_read = 10u64.pow(18)).unwrap_err();
        assert!(
            matches!(
                e,
                PartFault::ReplayCount {
                    image: 1,
                    field: "journal_blocks_read",
                    max: 1024,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .contains("images[1].outcome.replay.journal_blocks_read"),
            "{e}"
        );
        type Edit = (&'static str, fn(&mut Replay));
        let edits: [Edit; 4] = [
            ("start", |r| r.start = u64::MAX),
            ("maxlen", |r| r.maxlen = 1 << 40),
            ("transactions", |r| r.transactions = 47),
            ("home_blocks_written", |r| r.home_blocks_written = 47),
        ];
        for (field, edit) in edits {
            let e = with_edited(edit).unwrap_err();
            assert!(
                matches!(e, PartFault::ReplayCount { image: 1, field: f, .. } if f == field),
                "{field}: {e:?}"
            );
        }
        assert_eq!(
            with_edited(|r| r.home_blocks_written = 28),
            Err(PartFault::HomeBlocks {
                image: 1,
                listed: 29,
                written: 28
            })
        );
        let r = replay();
        assert_eq!(
            check(ONE, None, [image(&r)]),
            Err(PartFault::ReplayWithoutJournal { image: 0 })
        );
    }
}
