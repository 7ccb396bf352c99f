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
