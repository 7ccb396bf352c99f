//! Stage 2 of a turn: the conversation so far and the controller with the user's input sent
//! (before any model or tool runs). A failure here gives the claim up at once (see [`super::admit::abandon`]).

use super::admit::{abandon, Claim};
use super::context::{ChatSetup, Ports, Submission, TurnLimits};
use super::fault::{Refusal, Stage};
use super::interrupt::Interrupt;
use turnkeep_core::chat::controller::{Action, ChatController, UserInput};
use turnkeep_core::protocol::BoundaryError;
use turnkeep_core::sequence::TurnSequencer;

/// A turn ready to run: nothing has been streamed or published yet.
pub struct Opened {
    pub controller: ChatController,
    /// The action that starts the model.
    pub first: Action,
    /// How many messages the conversation had before this turn.
    pub history_len: usize,
    /// True when that history came from `ChatMemory` (earlier turns saved it, and published it
    /// to the log if there was one); false when it is the definition's initial messages.
    pub history_from_memory: bool,
}

/// Loads the messages (under `deadline`) and sends the input. On failure the claim is abandoned.
pub async fn open(
    ports: &Ports,
    chat: &ChatSetup,
    submission: &Submission,
    claim: &Claim,
    limits: &TurnLimits,
    deadline: &Interrupt,
) -> Result<Opened, Refusal> {
    let opened = try_open(ports, chat, submission, claim, deadline).await;
    if opened.is_err() {
        abandon(ports, &claim.envelope, limits).await;
    }
    opened
}

async fn try_open(
    ports: &Ports,
    chat: &ChatSetup,
    submission: &Submission,
    claim: &Claim,
    deadline: &Interrupt,
) -> Result<Opened, Refusal> {
    let (mut controller, history) = controller_over_history(ports, chat, claim, deadline).await?;
    let ids = ports.ids.as_ref();
    let mut next_id = |p: &str| ids.next_id(p);
    let now_ms = ports.clock.now_ms();
    let first = if submission.regenerate {
        controller.regenerate(now_ms, &mut next_id)
    } else {
        let input = UserInput {
            text: submission.input.clone(),
            id: submission.message.id.clone(),
            files: submission.message.files.clone(),
            metadata: submission.message.metadata.clone(),
        };
        controller.send_message(&input, now_ms, &mut next_id)
    }
    .map_err(|_| BoundaryError::InvalidEvent)?;
    Ok(history.opened(controller, first))
}

/// The conversation a turn starts from.
pub(crate) struct History {
    len: usize,
    from_memory: bool,
}

impl History {
    pub(crate) fn opened(self, controller: ChatController, first: Action) -> Opened {
        Opened {
            controller,
            first,
            history_len: self.len,
            history_from_memory: self.from_memory,
        }
    }
}

/// A controller over the saved messages (or the definition's initial messages when none are
/// saved), loaded under `deadline`; nothing sent yet.
pub(crate) async fn controller_over_history(
    ports: &Ports,
    chat: &ChatSetup,
    claim: &Claim,
    deadline: &Interrupt,
) -> Result<(ChatController, History), Refusal> {
    // The sequences of this turn's lines derive from the claim; refuse before anything runs.
    TurnSequencer::new(claim.generation()).map_err(|_| BoundaryError::Internal)?;
    let loaded = deadline
        .guard(async {
            ports
                .memory
                .load(deadline.token())
                .await
                .map_err(|e| Refusal::internal(Stage::MemoryLoad, e))
        })
        .await?;
    let from_memory = !loaded.is_empty();
    let history = if from_memory {
        loaded
    } else {
        chat.initial_messages.clone()
    };
    let len = history.len();
    let controller = ChatController::new(chat.config.clone(), history);
    Ok((controller, History { len, from_memory }))
}
