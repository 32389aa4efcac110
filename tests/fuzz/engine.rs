//! A seeded mutational fuzzer that runs on the stable toolchain, shared by every fuzz target.
//!
//! Each target starts from a corpus of real inputs (captured streams and files under
//! `tests/fuzz/corpus/<target>/`), runs every one of them as is, then mutates them: bit flips,
//! random and "interesting" bytes, tokens from the target's dictionary, deleted, duplicated
//! and spliced ranges, truncation, and long runs that reach size limits. The target's check
//! asserts invariants on each input (equal results for any chunking, round trips, limits),
//! not just the absence of a panic.
//!
//! The run is deterministic: case `k` of a target is derived from the seed and `k` alone, so
//! a failure names its seed and case and replays with `UMCP_FUZZ_SEED` and `UMCP_FUZZ_CASE`.
//! `UMCP_FUZZ_CASES=N` sets the number of cases per target (the default is each target's
//! bounded CI count); with it and no `UMCP_FUZZ_SEED`, the seed comes from the clock, so
//! repeated long runs explore new inputs. With `UMCP_FUZZ_REPORT=<dir>`, each target writes
//! `<dir>/<target>` holding `<target> <cases> <failures>` for `.ci/run` to add up.

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

/// A small, fast, seedable generator (SplitMix64): plenty for choosing mutations.
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// True once in `n` times.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A size skewed towards small values, up to `max`.
    pub fn small(&mut self, max: usize) -> usize {
        let bits = self.below(usize::BITS as usize - max.leading_zeros() as usize + 1);
        let bound = 1usize.checked_shl(bits as u32).unwrap_or(usize::MAX);
        self.below(bound.min(max.saturating_add(1)))
    }
}

/// A fuzz target: its name, corpus, dictionary and bounded default case count.
pub struct Target<'a> {
    /// The name, also the corpus folder under `tests/fuzz/corpus/`.
    pub name: &'a str,
    /// Tokens worth inserting (field names, delimiters, escapes).
    pub dictionary: &'a [&'a [u8]],
    /// Cases run when `UMCP_FUZZ_CASES` is not set.
    pub default_cases: u64,
}

impl Target<'_> {
    /// Runs the target: every corpus input as is, then mutated ones, until the case count is
    /// reached. `check` panics (with a message) when an invariant does not hold.
    pub fn run(&self, check: impl Fn(&[u8], &mut Rng)) {
        let corpus = self.corpus();
        assert!(
            !corpus.is_empty(),
            "no corpus for fuzz target `{}`",
            self.name
        );
        let cases = cases(self.default_cases).max(corpus.len() as u64);
        let seed = seed();
        // One case replayed alone, whatever the count (a long run's cases are past the
        // bounded one's).
        let range = match env_u64("UMCP_FUZZ_CASE") {
            Some(k) => k..k.saturating_add(1),
            None => 0..cases,
        };
        let mut ran = 0u64;
        for case in range {
            let mut rng = Rng::new(seed ^ case.wrapping_mul(0xd1b5_4a32_d192_ed03));
            let input = match corpus.get(case as usize) {
                Some(original) => original.clone(),
                None => self.mutant(&corpus, &mut rng),
            };
            ran += 1;
            let outcome = catch_unwind(AssertUnwindSafe(|| check(&input, &mut rng)));
            if let Err(panic) = outcome {
                self.report(ran, 1);
                let message = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("(no message)");
                panic!(
                    "fuzz target `{}` failed at case {case} (replay: UMCP_FUZZ_SEED={seed} \
                     UMCP_FUZZ_CASE={case}): {message}\ninput ({} bytes): {}",
                    self.name,
                    input.len(),
                    escape(&input)
                );
            }
        }
        self.report(ran, 0);
    }

    fn corpus(&self) -> Vec<Vec<u8>> {
        let dir = corpus_dir().join(self.name);
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.is_file())
            .collect();
        paths.sort();
        paths
            .iter()
            .map(|path| std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
            .collect()
    }

    /// A mutated copy of a corpus input: one to eight mutations in a row.
    fn mutant(&self, corpus: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
        let mut data = rng.pick(corpus).clone();
        for _ in 0..=rng.below(8) {
            mutate(&mut data, corpus, self.dictionary, rng);
        }
        data
    }

    fn report(&self, cases: u64, failures: u64) {
        let Some(dir) = std::env::var_os("UMCP_FUZZ_REPORT") else {
            return;
        };
        let line = format!("{} {cases} {failures}\n", self.name);
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(PathBuf::from(dir).join(self.name), line);
    }
}

/// Applies one random mutation to `data`.
pub fn mutate(data: &mut Vec<u8>, corpus: &[Vec<u8>], dictionary: &[&[u8]], rng: &mut Rng) {
    const INTERESTING: &[u8] = b"\0\n\r\t \"\\:,{}[]%$#?/@=\xff\xfe\xef\xbb\xbf\x7f\x80";
    let len = data.len();
    let at = rng.below(len + 1);
    match rng.below(11) {
        0 if len > 0 => data[at.min(len - 1)] ^= 1 << rng.below(8),
        1 if len > 0 => data[at.min(len - 1)] = rng.next_u64() as u8,
        2 => data.insert(at, *rng.pick(INTERESTING)),
        3 | 4 if !dictionary.is_empty() => {
            let token = rng.pick(dictionary);
            data.splice(at..at, token.iter().copied());
        }
        5 if len > 0 => {
            let end = (at + 1 + rng.small(len)).min(len);
            data.drain(at.min(len - 1)..end);
        }
        6 if len > 0 => {
            let start = rng.below(len);
            let end = (start + 1 + rng.small(len - start)).min(len);
            let copy = data[start..end].to_vec();
            data.splice(at..at, copy);
        }
        7 => {
            // Splice in part of another input, where a stream boundary would fall.
            let other = rng.pick(corpus);
            if !other.is_empty() {
                let start = rng.below(other.len());
                let end = (start + 1 + rng.small(other.len() - start)).min(other.len());
                data.splice(at..at, other[start..end].iter().copied());
            }
        }
        8 => data.truncate(at),
        9 => {
            // A long run, to reach size limits.
            let byte = if rng.one_in(2) {
                *rng.pick(INTERESTING)
            } else {
                b'a' + rng.below(26) as u8
            };
            let count = 1 + rng.small(1 << 12);
            data.splice(at..at, std::iter::repeat_n(byte, count));
        }
        _ => data.insert(at, rng.next_u64() as u8),
    }
}

/// The sizes of the chunks a reader sees of `len` bytes: random, sometimes one byte each
/// (for inputs short enough that this stays quick).
pub fn chunk_sizes(len: usize, rng: &mut Rng) -> Vec<usize> {
    let bytewise = len <= 4096 && rng.one_in(4);
    let mut sizes = Vec::new();
    let mut rest = len;
    while rest > 0 {
        let size = if bytewise { 1 } else { 1 + rng.small(rest - 1) };
        sizes.push(size.min(rest));
        rest -= size.min(rest);
    }
    sizes
}

/// A reader that hands out `data` in chunks of the given sizes, one per `read`, with
/// `Interrupted` errors where `interrupt` says so.
pub struct Chunked {
    data: Vec<u8>,
    at: usize,
    sizes: std::vec::IntoIter<usize>,
    interrupt: Vec<bool>,
    reads: usize,
}

impl std::io::Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.reads += 1;
        if self.interrupt.get(self.reads - 1).copied().unwrap_or(false) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        let Some(size) = self.sizes.next() else {
            return Ok(0);
        };
        // The buffer is never smaller than the whole input, so a chunk always fits.
        let n = size.min(buf.len());
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A reader over `data` split at random points (a `BufReader` whose buffer is larger than
/// any chunk, so each `fill_buf` sees exactly one chunk), with random `Interrupted` errors.
pub fn chunked_reader(data: &[u8], rng: &mut Rng) -> std::io::BufReader<Chunked> {
    let sizes = chunk_sizes(data.len(), rng);
    let interrupt = (0..sizes.len() * 2 + 2).map(|_| rng.one_in(16)).collect();
    let reader = Chunked {
        data: data.to_vec(),
        at: 0,
        sizes: sizes.into_iter(),
        interrupt,
        reads: 0,
    };
    std::io::BufReader::with_capacity(data.len().max(1), reader)
}

/// The number of cases to run: `UMCP_FUZZ_CASES`, or the target's default.
pub fn cases(default: u64) -> u64 {
    env_u64("UMCP_FUZZ_CASES").unwrap_or(default)
}

/// The seed: `UMCP_FUZZ_SEED`; else fixed for the bounded run and from the clock for a
/// longer one, which then explores new inputs each time.
pub fn seed() -> u64 {
    if let Some(seed) = env_u64("UMCP_FUZZ_SEED") {
        return seed;
    }
    if env_u64("UMCP_FUZZ_CASES").is_some() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        return now.as_nanos() as u64;
    }
    0x756d_6370_6675_7a7a
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// `tests/fuzz/corpus` of the workspace: under the package that compiles this engine (the
/// library), or under the first folder above it that has one (the test-support package, for
/// the command-line tool's targets).
fn corpus_dir() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let corpus = |dir: &std::path::Path| dir.join("tests/fuzz/corpus");
    here.ancestors()
        .map(corpus)
        .find(|dir| dir.is_dir())
        .unwrap_or_else(|| corpus(&here))
}

/// `data` as an escaped byte string, cut to a readable length.
pub fn escape(data: &[u8]) -> String {
    const SHOWN: usize = 2048;
    let mut out = String::from("b\"");
    for &b in data.iter().take(SHOWN) {
        let _ = write!(out, "{}", std::ascii::escape_default(b));
    }
    out.push('"');
    if data.len() > SHOWN {
        let _ = write!(out, "… ({} more bytes)", data.len() - SHOWN);
    }
    out
}
