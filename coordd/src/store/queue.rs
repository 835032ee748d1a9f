//! The write queue in front of a backend's writer thread, the same for every backend: async
//! callers [`Writer::submit`] jobs into a bounded channel; the thread takes them in
//! batches of up to [`MAX_BATCH`] ([`Queue::next_batch`]) and group-commits each batch its
//! own way (`store::sqlite::writer`, `store::postgres::writer`). Stopping runs what is
//! already queued and refuses the rest.

use tokio::sync::{mpsc, oneshot};

use crate::error::{Error, Result};
use crate::store::backend::WriteJob;

/// Most jobs folded into one transaction.
pub const MAX_BATCH: usize = 512;
/// Jobs queued before submitters wait.
pub const QUEUE: usize = 4 * MAX_BATCH;

enum Msg {
    Job(WriteJob),
    /// Finish what is queued, stop, and say so.
    Stop(oneshot::Sender<()>),
}

/// Handle to a writer thread. Cloning is cheap; the thread stops on [`Writer::stop`] or
/// when all handles drop.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Msg>,
}

impl Writer {
    /// Start the thread `name`, running `body` on the receiving end of a new queue.
    pub fn spawn(
        name: &str,
        body: impl FnOnce(Queue) + Send + 'static,
    ) -> std::io::Result<(Writer, std::thread::JoinHandle<()>)> {
        let (tx, rx) = mpsc::channel::<Msg>(QUEUE);
        let handle = std::thread::Builder::new().name(name.into()).spawn(move || body(Queue { rx, stopped: None }))?;
        Ok((Writer { tx }, handle))
    }

    /// Queue a job (waiting while the queue is full).
    pub async fn submit(&self, job: WriteJob) -> Result<()> {
        self.tx
            .send(Msg::Job(job))
            .await
            .map_err(|_| Error::Internal("the writer has stopped (daemon shutting down)".into()))
    }

    /// Run what is already queued and stop (the thread says when); later writes fail.
    pub async fn stop(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::Stop(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }
}

/// The writer thread's end of the queue.
pub struct Queue {
    rx: mpsc::Receiver<Msg>,
    stopped: Option<oneshot::Sender<()>>,
}

impl Queue {
    /// Block for the next job, then add it and whatever else is queued (up to
    /// [`MAX_BATCH`] jobs in all) to `batch`. False once the writer is to stop: a stop was
    /// asked for, or every handle dropped (`batch` may still hold jobs to run).
    pub fn next_batch(&mut self, batch: &mut Vec<WriteJob>) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        let Some(first) = self.rx.blocking_recv() else { return false };
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Job(job) => batch.push(job),
                Msg::Stop(ack) => {
                    self.stopped = Some(ack);
                    return false;
                }
            }
            if batch.len() < MAX_BATCH {
                next = self.rx.try_recv().ok();
            }
        }
        true
    }

    /// Add whatever is queued now to `batch` (up to [`MAX_BATCH`] jobs in all), without
    /// waiting. A stop found there is kept: the next [`Queue::next_batch`] returns false.
    pub fn top_up(&mut self, batch: &mut Vec<WriteJob>) {
        while self.stopped.is_none() && batch.len() < MAX_BATCH {
            match self.rx.try_recv() {
                Ok(Msg::Job(job)) => batch.push(job),
                Ok(Msg::Stop(ack)) => self.stopped = Some(ack),
                Err(_) => return,
            }
        }
    }

    /// Refuse whatever is submitted from now on, and add the jobs still queued to `batch`.
    pub fn close(&mut self, batch: &mut Vec<WriteJob>) {
        self.rx.close();
        while let Ok(msg) = self.rx.try_recv() {
            match msg {
                Msg::Job(job) => batch.push(job),
                Msg::Stop(ack) => drop(ack),
            }
        }
    }

    /// The writer has stopped: tell whoever asked.
    pub fn finished(self) {
        tracing::debug!("writer stopped");
        if let Some(ack) = self.stopped {
            let _ = ack.send(());
        }
    }
}
