//! Reading a table: its summary, a seat's view, the update stream, and presence (heartbeats).

use super::*;

pub(super) async fn get_table(
    api: &TableApi,
    request: Request<pb::GetTableRequest>,
) -> Result<Response<pb::GetTableResponse>, Status> {
    let caller = caller(&request)?;
    let id = table_id(&request.get_ref().name, "name")?;
    let outcome = api.tables.read(id, &caller).await.map_err(status_of)?;
    admit_reader(&outcome, &caller, caller_is_staff(&request))?;
    Ok(Response::new(pb::GetTableResponse {
        table: Some(api.table_with_presence(&outcome.summary).await),
    }))
}

pub(super) async fn get_seat_view(
    api: &TableApi,
    request: Request<pb::GetSeatViewRequest>,
) -> Result<Response<pb::GetSeatViewResponse>, Status> {
    let caller = caller(&request)?;
    let id = table_id(&request.get_ref().table, "table")?;
    let form = view_form(request.get_ref().view_form)?;
    if form == pb::SeatViewForm::None {
        return Err(status::invalid_argument(
            Reason::InvalidViewForm,
            "view_form",
            "GetSeatView is for the view: send 0 (both), 1 (typed) or 2 (engine), not 3 (none)",
        ));
    }
    let freshness = match request.get_ref().min_version {
        None => Freshness::Latest,
        Some(v) => Freshness::AtLeast(version_arg(v, "min_version")?),
    };
    let outcome = api
        .tables
        .read_fresh(id, &caller, freshness)
        .await
        .map_err(status_of)?;
    if outcome.seat.is_none() {
        return Err(status_of(TableError::NotSeated));
    }
    let mut view = view_in(&outcome, form);
    view.summary = Some(api.table_with_presence(&outcome.summary).await);
    Ok(Response::new(pb::GetSeatViewResponse { view: Some(view) }))
}

pub(super) async fn watch_table(
    api: &TableApi,
    request: Request<pb::WatchTableRequest>,
) -> Result<Response<WatchStream>, Status> {
    let caller = caller(&request)?;
    let staff = caller_is_staff(&request);
    let r = request.into_inner();
    let id = table_id(&r.table, "table")?;
    let after = version_arg(r.after_version, "after_version")?;
    let first = api.tables.read(id, &caller).await.map_err(status_of)?;
    admit_reader(&first, &caller, staff)?;
    if after > first.summary.version {
        return Err(status_of(ServiceError::VersionAhead {
            asked: after,
            actual: first.summary.version,
        }));
    }
    // Only a stream of a table that exists, to a caller it admits, counts against the limit.
    let slot = api.streams.take(&caller)?;
    // Opening the stream takes a seat back from its bot: only a stream that opens does (a
    // refused call changes nothing).
    match api.tables.reclaim(id, &caller).await {
        Ok(()) | Err(ServiceError::Table(_)) => {}
        Err(e) => return Err(status_of(e)),
    }
    let rx = api
        .tables
        .watch(id, &caller, after)
        .await
        .map_err(status_of)?;
    let presence = api
        .live
        .as_ref()
        .map(|(presences, _)| presences.streaming(id, &caller));
    use tonic::codegen::tokio_stream::StreamExt;
    let table_text = id.to_string();
    let stream = ReceiverStream::new(rx).map(move |update| {
        let _open = (&presence, &slot);
        let update = update.map_err(status_of)?;
        let (version, time, kind, turn_deadline) = match update {
            Update::Snapshot(outcome) => (
                outcome.summary.version,
                Some(timestamp(Utc::now())),
                pb::table_update::Kind::Snapshot(view_to_proto(&outcome)),
                None,
            ),
            Update::Event {
                version,
                time,
                shown,
                turn_deadline_ms,
            } => (
                version,
                Some(timestamp(time)),
                pb::table_update::Kind::Event(event_to_proto(&shown, &table_text)?),
                turn_deadline_ms,
            ),
            Update::Heartbeat { version } => (
                version,
                Some(timestamp(Utc::now())),
                pb::table_update::Kind::Heartbeat(pb::Heartbeat {}),
                None,
            ),
        };
        Ok(pb::WatchTableResponse {
            update: Some(pb::TableUpdate {
                version: version as i64,
                time,
                kind: Some(kind),
                turn_deadline: turn_deadline.and_then(deadline_to_proto),
            }),
        })
    });
    Ok(Response::new(Box::pin(stream)))
}

pub(super) async fn send_heartbeat(
    api: &TableApi,
    request: Request<pb::SendHeartbeatRequest>,
) -> Result<Response<pb::SendHeartbeatResponse>, Status> {
    let caller = caller(&request)?;
    let id = table_id(&request.get_ref().table, "table")?;
    let (presences, _) = api.live()?;
    let outcome = api.tables.read(id, &caller).await.map_err(status_of)?;
    let seat = outcome
        .seat
        .ok_or_else(|| status_of(TableError::NotSeated))?;
    presences
        .touch(id, &caller, Seen::Heartbeat)
        .await
        .map_err(|e| status_of(Failure::Presence(e)))?;
    let s = &outcome.summary;
    let states = presences
        .of_seats(id, &s.seats, &s.substituted)
        .await
        .unwrap_or([Presence::Unknown; 4]);
    Ok(Response::new(pb::SendHeartbeatResponse {
        presence: presence_to_proto(states[seat as usize]) as i32,
    }))
}
