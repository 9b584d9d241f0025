//! The CUDA header's logic, compiled as plain C++ for the host and compared
//! with the Rust crate. This runs without a GPU (wherever a C++ compiler is
//! found), so a mistake in the header shows up in every CI run; the device
//! path (`__umulhi`, NVRTC) is compared on a GPU by `gpu_bit_identity.rs`.

use std::io::Write;
use std::process::Command;

use warpmc_rng::{Domain, Mwc, PhiloxStream, RandomSource, multipliers};

const DRIVER: &str = r#"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "warpmc_rng.cuh"
using namespace warpmc::rng;

static void put32(u32 x) { fwrite(&x, 4, 1, stdout); }
static void put64(u64 x) { fwrite(&x, 8, 1, stdout); }

int main(int argc, char** argv) {
    // argv[1]: table file
    if (argc != 2) return 3;
    FILE* f = fopen(argv[1], "rb");
    std::vector<u32> table(1 << 17);
    if (!f || fread(table.data(), 4, table.size(), f) != table.size()) return 2;
    fclose(f);
    // Philox: 37 streams x 41 words from offset 5.
    for (u64 t = 0; t < 37; ++t) {
        PhiloxStream s(0xfeedfacecafebeefull, stream_id(WARPMC_DOMAIN_TEST, t), 5);
        for (int i = 0; i < 41; ++i) put32(s.next_u32());
    }
    // MWC: units 131060.. (wrapping the table) x 41 words.
    for (u64 t = 0; t < 37; ++t) {
        Mwc g = mwc_for_unit(99, 131060 + t, table.data(), (u32)table.size());
        for (int i = 0; i < 41; ++i) put32(g.next_u32());
    }
    // Conversions from one Philox stream.
    PhiloxStream s(1, 2);
    const u32 ranges[] = {1, 3, 9, 255, 0x80000001u, 0};
    for (int i = 0; i < 600; ++i) {
        float a = next_f32(s), b = next_f32_open(s);
        double c = next_f64(s), d = next_f64_open(s);
        u32 a32, b32; u64 c64, d64;
        memcpy(&a32, &a, 4); memcpy(&b32, &b, 4); memcpy(&c64, &c, 8); memcpy(&d64, &d, 8);
        put32(a32); put32(b32); put64(c64); put64(d64);
        put32(below(s, ranges[i % 6]));
    }
    return 0;
}
"#;

fn expected() -> Vec<u8> {
    let mut out = Vec::new();
    for t in 0..37 {
        let mut s = PhiloxStream::at(0xfeed_face_cafe_beef, Domain::Test.stream(t), 5);
        (0..41).for_each(|_| out.extend(s.next_u32().to_le_bytes()));
    }
    for t in 0..37 {
        let mut g = Mwc::for_unit(99, 131_060 + t);
        (0..41).for_each(|_| out.extend(g.next_u32().to_le_bytes()));
    }
    let mut s = PhiloxStream::new(1, 2);
    let ranges = [1u32, 3, 9, 255, 0x8000_0001, 0];
    for i in 0..600 {
        out.extend(s.next_f32().to_bits().to_le_bytes());
        out.extend(s.next_f32_open().to_bits().to_le_bytes());
        out.extend(s.next_f64().to_bits().to_le_bytes());
        out.extend(s.next_f64_open().to_bits().to_le_bytes());
        out.extend(s.below(ranges[i % 6]).to_le_bytes());
    }
    out
}

#[test]
fn header_compiled_for_the_host_matches_rust() {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    if Command::new(&cxx).arg("--version").output().is_err() {
        println!("SKIPPED header_compiled_for_the_host_matches_rust: no C++ compiler ({cxx})");
        return;
    }
    let dir = warpmc_testkit::scratch_dir("header-host");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("warpmc_rng.cuh"), warpmc_rng::CUDA_HEADER).unwrap();
    std::fs::write(dir.join("driver.cpp"), DRIVER).unwrap();
    let table = dir.join("table.bin");
    std::fs::File::create(&table).unwrap().write_all(&multipliers::to_le_bytes(multipliers::table())).unwrap();
    let exe = dir.join("driver");
    let built = Command::new(&cxx)
        .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(dir.join("driver.cpp"))
        .output()
        .unwrap();
    assert!(built.status.success(), "the header does not compile as C++:\n{}", String::from_utf8_lossy(&built.stderr));
    let run = Command::new(&exe).arg(&table).output().unwrap();
    assert!(run.status.success(), "driver failed: {:?}", run.status);
    let want = expected();
    assert_eq!(run.stdout.len(), want.len());
    if let Some(i) = (0..want.len()).find(|&i| run.stdout[i] != want[i]) {
        panic!("header output differs from Rust at byte {i}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The domain numbers and Philox constants in the header are the crate's.
#[test]
fn header_constants_match_the_crate() {
    let h = warpmc_rng::CUDA_HEADER;
    let define = |name: &str| -> u64 {
        let line =
            h.lines().find(|l| l.starts_with(&format!("#define {name} "))).unwrap_or_else(|| panic!("{name} missing"));
        let v = line.split_whitespace().nth(2).unwrap().trim_end_matches("ull").trim_end_matches('u');
        match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
            None => v.parse().unwrap(),
        }
    };
    for (name, d) in [
        ("WARPMC_DOMAIN_USER", Domain::User),
        ("WARPMC_DOMAIN_MWC_SEEDING", Domain::MwcSeeding),
        ("WARPMC_DOMAIN_POTTS", Domain::Potts),
        ("WARPMC_DOMAIN_FLAME", Domain::Flame),
        ("WARPMC_DOMAIN_PRIMS", Domain::Prims),
        ("WARPMC_DOMAIN_TEST", Domain::Test),
    ] {
        assert_eq!(define(name), d as u64, "{name}");
    }
    assert_eq!(define("WARPMC_STREAM_INDEX_BITS"), u64::from(warpmc_rng::stream::STREAM_INDEX_BITS));
    use warpmc_rng::philox::*;
    assert_eq!(define("WARPMC_PHILOX_M0"), u64::from(PHILOX_M0));
    assert_eq!(define("WARPMC_PHILOX_M1"), u64::from(PHILOX_M1));
    assert_eq!(define("WARPMC_PHILOX_W0"), u64::from(PHILOX_W0));
    assert_eq!(define("WARPMC_PHILOX_W1"), u64::from(PHILOX_W1));
}
