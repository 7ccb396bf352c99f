//! The retry schedule: how long the connection waits before its next read. Exponential with a
//! ceiling, and "equal jitter" (half the delay fixed, half drawn), so that the tabs a server
//! restart disconnected all at once do not come back all at once. The randomness is a seeded
//! generator owned by the caller (the core draws none of its own).

/// The delay before attempt `attempt` (0 for the first retry): `min_ms × 2^attempt`, at most
/// `max_ms`, of which the upper half is scaled by `unit` (a draw in `[0, 1)`).
pub fn delay_ms(attempt: u32, min_ms: u64, max_ms: u64, unit: f64) -> u64 {
    let full = min_ms.saturating_mul(1u64 << attempt.min(32)).min(max_ms);
    let half = full / 2;
    let unit = if unit.is_finite() {
        unit.clamp(0.0, 1.0)
    } else {
        0.0
    };
    full - half + (half as f64 * unit) as u64
}

/// xorshift64*: a small, fast generator for jitter (not for anything that must be unguessable).
#[derive(Clone, Debug)]
pub(crate) struct Jitter {
    state: u64,
}

impl Jitter {
    /// Any seed; zero (the one state xorshift cannot leave) is replaced.
    pub(crate) fn new(seed: u64) -> Self {
        Self {
            state: if seed == 0 {
                0x9E37_79B9_7F4A_7C15
            } else {
                seed
            },
        }
    }

    /// The next draw in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        let out = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (out >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_up_to_the_ceiling_with_the_upper_half_jittered() {
        let check = |attempt, unit, expected| {
            assert_eq!(
                delay_ms(attempt, 250, 8_000, unit),
                expected,
                "attempt {attempt}, unit {unit}"
            );
        };
        check(0, 0.0, 125);
        check(0, 0.999_999, 249);
        check(1, 0.0, 250);
        check(2, 0.5, 750);
        check(5, 0.0, 4_000);
        check(6, 0.0, 4_000); // 16 000 capped to 8 000
        check(60, 0.0, 4_000); // no overflow for absurd attempts
        check(3, f64::NAN, 1_000);
        check(3, 7.0, 2_000); // a draw outside [0, 1) is clamped
    }

    #[test]
    fn the_generator_is_deterministic_per_seed_and_stays_in_range() {
        let draws = |seed| {
            let mut j = Jitter::new(seed);
            (0..1000).map(|_| j.unit()).collect::<Vec<_>>()
        };
        assert_eq!(draws(7), draws(7));
        assert_ne!(draws(7), draws(8));
        let all = draws(0);
        assert!(all.iter().all(|u| (0.0..1.0).contains(u)));
        let mean = all.iter().sum::<f64>() / all.len() as f64;
        assert!((0.4..0.6).contains(&mean), "mean {mean}");
    }
}
