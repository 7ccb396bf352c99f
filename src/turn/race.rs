//! Combining futures without an executor: racing two, running several side by side in one task,
//! and bounding a step by a time budget. Everything a turn awaits goes through these, so the same
//! code runs under `futures::executor::block_on` on the host and under `spawn_local` in wasm.

use std::future::Future;
use std::task::{Context, Poll};

use turnkeep_ports::chat::Sleep;
use turnkeep_ports::CancelToken;

/// Which of two raced futures finished first.
pub enum Either<A, B> {
    Left(A),
    Right(B),
}

/// Polls `a` and `b` together and returns the first to finish (the other is dropped).
/// `a` is polled first, so it wins a tie.
pub async fn race<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let mut a = Box::pin(a);
    let mut b = Box::pin(b);
    std::future::poll_fn(move |cx: &mut Context<'_>| {
        if let Poll::Ready(v) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(v));
        }
        if let Poll::Ready(v) = b.as_mut().poll(cx) {
            return Poll::Ready(Either::Right(v));
        }
        Poll::Pending
    })
    .await
}

/// Runs `a` and `b` side by side in the current task until both finished.
pub async fn join<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let mut a = Box::pin(a);
    let mut b = Box::pin(b);
    let (mut left, mut right) = (None, None);
    std::future::poll_fn(move |cx: &mut Context<'_>| {
        if left.is_none() {
            if let Poll::Ready(v) = a.as_mut().poll(cx) {
                left = Some(v);
            }
        }
        if right.is_none() {
            if let Poll::Ready(v) = b.as_mut().poll(cx) {
                right = Some(v);
            }
        }
        if left.is_some() && right.is_some() {
            return Poll::Ready((left.take().unwrap(), right.take().unwrap()));
        }
        Poll::Pending
    })
    .await
}

/// A time budget for one cleanup step: the step gets [`Budget::token`] as its cancel token, and
/// when the budget runs out the token fires and the step is dropped. Cleanup runs under budgets of
/// its own, never under the turn's deadline, which has often fired already (that is why cleanup
/// runs): a store that honours a fired token would refuse the very save that releases the lease.
pub(crate) struct Budget<'s> {
    sleep: &'s dyn Sleep,
    ms: u64,
    token: CancelToken,
}

impl<'s> Budget<'s> {
    pub(crate) fn new(sleep: &'s dyn Sleep, ms: u64) -> Self {
        Self {
            sleep,
            ms,
            token: CancelToken::new(),
        }
    }

    /// The token to hand to the step's port calls.
    pub(crate) fn token(&self) -> &CancelToken {
        &self.token
    }

    /// `Some(output)` when `step` finished in time; `None` when the budget ran out first.
    pub(crate) async fn run<F: Future>(&self, step: F) -> Option<F::Output> {
        match race(step, self.sleep.sleep(self.ms)).await {
            Either::Left(v) => Some(v),
            Either::Right(()) => {
                self.token.cancel();
                None
            }
        }
    }
}

/// The cancel token of cleanup steps run one after another (a turn's final memory save, then its
/// release): one token for every budget made here until one runs out, then a fresh one. A host
/// shell turns each token into an object of its own (the web shell: an `AbortController`, about
/// 10 µs in Node), and a budget's token fires only when that budget runs out, so until then the
/// steps can share it. Never for steps that run side by side: one budget running out would cancel
/// the other's step.
#[derive(Default)]
pub struct CleanupTokens {
    current: std::cell::RefCell<CancelToken>,
}

impl CleanupTokens {
    /// A budget of `ms` for the next cleanup step, with the shared token while it has not fired.
    pub(crate) fn budget<'s>(&self, sleep: &'s dyn Sleep, ms: u64) -> Budget<'s> {
        let mut current = self.current.borrow_mut();
        if current.is_cancelled() {
            *current = CancelToken::new();
        }
        Budget {
            sleep,
            ms,
            token: current.clone(),
        }
    }
}

/// Resolves when `token` fires (at once when it already has).
pub(crate) fn fired(token: &CancelToken) -> impl Future<Output = ()> + '_ {
    let watch = super::stop::StopWatch::new(token);
    async move {
        watch.until_stopped(std::future::pending::<()>()).await;
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use turnkeep_ports::LocalFuture;

    struct Never;
    impl Sleep for Never {
        fn sleep(&self, _ms: u64) -> LocalFuture<'_, ()> {
            Box::pin(std::future::pending())
        }
    }
    struct AtOnce;
    impl Sleep for AtOnce {
        fn sleep(&self, _ms: u64) -> LocalFuture<'_, ()> {
            Box::pin(std::future::ready(()))
        }
    }

    #[test]
    fn a_budget_that_runs_out_fires_its_token_and_drops_the_step() {
        let budget = Budget::new(&AtOnce, 5);
        assert_eq!(block_on(budget.run(std::future::pending::<u8>())), None);
        assert!(budget.token().is_cancelled());
        let budget = Budget::new(&Never, 5);
        assert_eq!(block_on(budget.run(async { 7 })), Some(7));
        assert!(!budget.token().is_cancelled());
    }

    #[test]
    fn cleanup_budgets_share_a_token_until_one_runs_out() {
        let tokens = CleanupTokens::default();
        let first = tokens.budget(&Never, 5);
        assert_eq!(block_on(first.run(async { 1 })), Some(1));
        let second = tokens.budget(&AtOnce, 5);
        assert!(
            !second.token().is_cancelled(),
            "a budget that finished in time leaves the token unfired"
        );
        assert_eq!(block_on(second.run(std::future::pending::<u8>())), None);
        assert!(first.token().is_cancelled(), "the shared token fired");
        let third = tokens.budget(&Never, 5);
        assert!(
            !third.token().is_cancelled(),
            "after a budget ran out, the next one gets a fresh token"
        );
    }

    #[test]
    fn join_waits_for_both_and_race_for_the_first() {
        assert_eq!(block_on(join(async { 1 }, async { 2 })), (1, 2));
        let token = CancelToken::new();
        token.cancel();
        assert!(matches!(
            block_on(race(std::future::pending::<u8>(), fired(&token))),
            Either::Right(())
        ));
    }
}
