//! The `openssd-iftl` profile (the i-FTL paper's Jasmine board, 4 KiB pages, 8 MB STT-RAM)
//! formats an i-FTL whose dataFTL, logFTL and transaction table fit its 8 MiB of NVM with room
//! for metadata slots; the paper's full 64 GB would not fit, which is a clear error.

use joj_device::{DataMode, FtlError, IFtl, NandMedium, Profile};

#[test]
fn the_profile_formats_and_the_paper_size_is_refused() {
    let p = Profile::builtin("openssd-iftl").unwrap();
    let cfg = p.iftl.clone().expect("the profile has NVM");
    assert_eq!(cfg.nvm_bytes, 8 << 20);
    assert_eq!(p.geometry.page_bytes, 4096);
    let m = NandMedium::new(p.geometry.clone(), p.timing.clone(), DataMode::OobOnly);
    let f = IFtl::format(m, cfg.clone(), &p.ftl, p.logical_pages()).unwrap();
    let (slots, free) = f.metadata_slots();
    eprintln!(
        "openssd-iftl: {} logical pages, {slots} metadata slots of 4 KiB in NVM",
        p.logical_pages()
    );
    assert!(slots >= 512 && free == slots as usize);

    // 64 GB at 4 KiB pages: 16 Mi dataFTL entries, 64 MiB.
    let big = p.with_blocks_per_plane(8192);
    let m = NandMedium::new(big.geometry.clone(), big.timing.clone(), DataMode::OobOnly);
    let e = IFtl::format(m, cfg, &big.ftl, big.logical_pages()).unwrap_err();
    assert!(matches!(e, FtlError::NvmExhausted { .. }), "{e}");
}
