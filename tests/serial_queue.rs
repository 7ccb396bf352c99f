//! `turn::serial::Serial`, the queue a stream's PUT and DELETE run through one at a time: arrival
//! order, the bound on waiting tasks (`limits::STREAM_EXCLUSIVE_WAITING_MAX`, one more refused at
//! once), and callers that go away while they wait — before their turn, or after it was handed
//! to them but before they ran (the queue once stayed busy forever then).
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::channel::oneshot;
use futures::task::noop_waker;
use turnkeep::core::limits::STREAM_EXCLUSIVE_WAITING_MAX;
use turnkeep::turn::serial::{QueueFull, Serial};

type Task<'a> = Pin<Box<dyn Future<Output = Result<(), QueueFull>> + 'a>>;

/// A task that logs `name` when it starts and finishes when `release` fires.
fn task<'a>(
    serial: &'a Serial,
    log: &'a RefCell<Vec<String>>,
    name: &'a str,
) -> (Task<'a>, oneshot::Sender<()>) {
    let (release, wait) = oneshot::channel::<()>();
    let fut = serial.run(async move {
        log.borrow_mut().push(name.to_owned());
        let _ = wait.await;
    });
    (Box::pin(fut), release)
}

/// Tasks a, b and c queued in that order (each polled once: a runs, b and c wait).
fn three<'a>(
    serial: &'a Serial,
    log: &'a RefCell<Vec<String>>,
) -> [(Task<'a>, oneshot::Sender<()>); 3] {
    let mut tasks = [
        task(serial, log, "a"),
        task(serial, log, "b"),
        task(serial, log, "c"),
    ];
    for (t, _) in tasks.iter_mut() {
        assert!(poll(t).is_pending());
    }
    tasks
}

fn poll(task: &mut Task<'_>) -> Poll<Result<(), QueueFull>> {
    let waker = noop_waker();
    task.as_mut().poll(&mut Context::from_waker(&waker))
}

#[test]
fn tasks_run_one_at_a_time_in_arrival_order() {
    let serial = Serial::new(4);
    let log = RefCell::new(Vec::new());
    let [(mut a, release_a), (mut b, release_b), (mut c, release_c)] = three(&serial, &log);
    assert_eq!(*log.borrow(), ["a"]);
    assert_eq!(serial.waiting(), 2);
    release_a.send(()).unwrap();
    assert_eq!(poll(&mut a), Poll::Ready(Ok(())));
    drop(a);
    assert!(poll(&mut c).is_pending(), "c arrived after b");
    assert!(poll(&mut b).is_pending());
    assert_eq!(*log.borrow(), ["a", "b"]);
    release_b.send(()).unwrap();
    release_c.send(()).unwrap();
    assert_eq!(poll(&mut b), Poll::Ready(Ok(())));
    drop(b);
    assert_eq!(poll(&mut c), Poll::Ready(Ok(())));
    assert_eq!(*log.borrow(), ["a", "b", "c"]);
}

#[test]
fn one_task_more_than_the_bound_is_refused_at_once_and_runs_nothing() {
    let serial = Serial::new(STREAM_EXCLUSIVE_WAITING_MAX);
    let log = RefCell::new(Vec::new());
    let names: Vec<String> = (0..=STREAM_EXCLUSIVE_WAITING_MAX + 1)
        .map(|i| format!("t{i}"))
        .collect();
    let mut tasks: Vec<_> = names.iter().map(|n| task(&serial, &log, n)).collect();
    let (last, rest) = tasks.split_last_mut().unwrap();
    for (t, _) in rest.iter_mut() {
        assert!(poll(t).is_pending());
    }
    assert_eq!(
        serial.waiting(),
        STREAM_EXCLUSIVE_WAITING_MAX,
        "one runs, the bound waits"
    );
    assert_eq!(poll(&mut last.0), Poll::Ready(Err(QueueFull)));
    assert_eq!(log.borrow().len(), 1, "the refused task never started");

    // Once one finished, there is room again.
    let (first, release) = tasks.remove(0);
    release.send(()).unwrap();
    let mut first = first;
    assert_eq!(poll(&mut first), Poll::Ready(Ok(())));
    drop(first);
    let (mut again, _release) = task(&serial, &log, "again");
    assert!(poll(&mut again).is_pending());
    assert_eq!(serial.waiting(), STREAM_EXCLUSIVE_WAITING_MAX);
}

#[test]
fn a_caller_that_leaves_before_its_turn_leaves_the_queue() {
    let serial = Serial::new(4);
    let log = RefCell::new(Vec::new());
    let [(mut a, release_a), (b, _release_b), (mut c, release_c)] = three(&serial, &log);
    drop(b);
    assert_eq!(serial.waiting(), 1);
    release_a.send(()).unwrap();
    assert_eq!(poll(&mut a), Poll::Ready(Ok(())));
    drop(a);
    release_c.send(()).unwrap();
    assert_eq!(poll(&mut c), Poll::Ready(Ok(())));
    assert_eq!(*log.borrow(), ["a", "c"]);
}

#[test]
fn a_caller_handed_the_turn_that_leaves_before_running_passes_it_on() {
    let serial = Serial::new(4);
    let log = RefCell::new(Vec::new());
    let [(mut a, release_a), (b, _release_b), (mut c, release_c)] = three(&serial, &log);
    release_a.send(()).unwrap();
    assert_eq!(poll(&mut a), Poll::Ready(Ok(())));
    drop(a); // hands the turn to b
    drop(b); // which goes away before it was polled again
    release_c.send(()).unwrap();
    assert_eq!(poll(&mut c), Poll::Ready(Ok(())), "c still gets its turn");
    assert_eq!(*log.borrow(), ["a", "c"]);
    drop(c);
    let (mut d, release_d) = task(&serial, &log, "d");
    release_d.send(()).unwrap();
    assert_eq!(
        poll(&mut d),
        Poll::Ready(Ok(())),
        "and the queue is free afterwards"
    );
}
