//! What can interrupt a request or its turn, and what each interruption means. The shell reports
//! events (the deadline fired, the client went away, the response body was cancelled, a stop was
//! requested); the rules here decide what they do, the same on every host.

use std::cell::Cell;
use std::rc::Rc;

use std::future::Future;

use super::fault::{Fault, Refusal};
use super::race::{fired, race, Either};
use turnkeep_core::protocol::BoundaryError;
use turnkeep_ports::CancelToken;

/// Why a request or a running turn was interrupted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The turn's deadline (`timeoutMs`) fired.
    Timeout,
    /// The client that sent the turn went away (its request aborted).
    ClientGone,
    /// The client cancelled the response body.
    ResponseCancelled,
    /// A client of the session asked to stop this turn (`client.turn.stop`).
    StopRequested,
    /// A newer claim of the same turn wrote to the session log: this writer is stale.
    Fenced,
    /// The turn outlived its lease (its process was paused, its clock jumped): another claim
    /// may own the session, so it must not write anything more.
    LeaseLapsed,
}

impl Cause {
    /// Whether this cause ends a running turn. With a session log the answer is durable and
    /// other clients follow it there, so losing the client that sent the turn (it went away or
    /// cancelled its body) does not stop the turn; the deadline, an explicit stop and being fenced
    /// always do. Without a log, the sender is the only reader, and losing it stops the turn.
    pub(crate) fn stops_turn(self, has_log: bool) -> bool {
        match self {
            Cause::Timeout | Cause::StopRequested | Cause::Fenced | Cause::LeaseLapsed => true,
            Cause::ClientGone | Cause::ResponseCancelled => !has_log,
        }
    }

    /// The answer before the stream started: 408 for the deadline, 499 for anything else.
    pub fn refusal(self) -> BoundaryError {
        match self {
            Cause::Timeout => BoundaryError::Timeout,
            _ => BoundaryError::Cancelled,
        }
    }

    /// The in-stream diagnostic that closes the sender's response after a turn ended this way.
    /// A cancelled body has no reader left; a requested stop ends like a normal turn (its final
    /// snapshot says `complete`); a fenced writer lost the session to a newer claim.
    pub(crate) fn closing_diagnostic(self) -> Option<BoundaryError> {
        match self {
            Cause::Timeout => Some(BoundaryError::Timeout),
            Cause::ClientGone => Some(BoundaryError::Cancelled),
            Cause::ResponseCancelled | Cause::StopRequested => None,
            Cause::Fenced | Cause::LeaseLapsed => Some(BoundaryError::SessionConflict),
        }
    }
}

/// A one-shot interruption: a cancel token plus the first cause that fired it. Cloning shares it.
#[derive(Clone, Default, Debug)]
pub struct Interrupt {
    token: CancelToken,
    cause: Rc<Cell<Option<Cause>>>,
}

impl Interrupt {
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires with `cause`; the first cause is kept.
    pub fn fire(&self, cause: Cause) {
        if self.cause.get().is_none() {
            self.cause.set(Some(cause));
        }
        self.token.cancel();
    }

    /// The token that fires with this interruption.
    pub fn token(&self) -> &CancelToken {
        &self.token
    }

    /// What fired it, if anything has.
    pub fn cause(&self) -> Option<Cause> {
        self.cause.get()
    }

    pub(crate) fn is_fired(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Runs one step before the stream starts under this interruption (the request's deadline):
    /// if it fires first, or the step failed after it fired, the request ends with 408 or 499
    /// (the step's fault, if any, is kept for the operator).
    pub async fn guard<T>(
        &self,
        step: impl Future<Output = Result<T, Refusal>>,
    ) -> Result<T, Refusal> {
        let refused = |fault: Option<Fault>| Refusal {
            error: self.cause().unwrap_or(Cause::ClientGone).refusal(),
            replayed: None,
            fault,
        };
        match race(step, fired(&self.token)).await {
            Either::Right(()) => Err(refused(None)),
            Either::Left(Err(refusal)) if self.is_fired() => Err(refused(refusal.fault)),
            Either::Left(result) => result,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losing_the_sender_stops_a_turn_only_without_a_log() {
        let check = |cause: Cause, without_log: bool, with_log: bool| {
            assert_eq!(
                cause.stops_turn(false),
                without_log,
                "{cause:?} without log"
            );
            assert_eq!(cause.stops_turn(true), with_log, "{cause:?} with log");
        };
        check(Cause::Timeout, true, true);
        check(Cause::ClientGone, true, false);
        check(Cause::ResponseCancelled, true, false);
        check(Cause::StopRequested, true, true);
        check(Cause::Fenced, true, true);
        check(Cause::LeaseLapsed, true, true);
    }

    #[test]
    fn the_first_cause_is_kept() {
        let interrupt = Interrupt::new();
        assert_eq!(interrupt.cause(), None);
        interrupt.fire(Cause::ClientGone);
        interrupt.clone().fire(Cause::Timeout);
        assert!(interrupt.token().is_cancelled());
        assert_eq!(interrupt.cause(), Some(Cause::ClientGone));
        assert_eq!(Cause::ClientGone.refusal(), BoundaryError::Cancelled);
        assert_eq!(Cause::Timeout.refusal(), BoundaryError::Timeout);
    }
}
