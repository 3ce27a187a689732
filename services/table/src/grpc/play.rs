//! Playing: a command for the caller's seat, the legal actions of their turn, and a client seed
//! for the next hand.

use super::*;

pub(super) async fn submit_command(
    api: &TableApi,
    request: Request<pb::SubmitCommandRequest>,
) -> Result<Response<pb::SubmitCommandResponse>, Status> {
    let caller = caller(&request)?;
    // The name to show for a player the table knows by none yet (see `TableCommand::Play`).
    let name = caller_name(&request);
    let r = request.into_inner();
    not_too_large(&r)?;
    let id = table_id(&r.table, "table")?;
    let rid = request_id(&r.request_id)?;
    let form = view_form(r.view_form)?;
    let command = TableCommand::Play {
        player: caller.clone(),
        command: command_from_proto(r.command.as_ref())?,
        name,
    };
    let expected = r
        .expected_version
        .map(|v| version_arg(v, "expected_version"))
        .transpose()?;
    let submitted = api
        .tables
        .submit(Submission::new(id, &caller, rid, command).expecting(expected))
        .await;
    // The player showed up at a table that exists and where they sit (a command the rules
    // refused counts): never a presence record for an unknown table or a stranger.
    match &submitted {
        Ok(outcome) if outcome.seat.is_some() => api.seen(id, &caller),
        Err(ServiceError::Table(TableError::Rule(_))) => api.seen(id, &caller),
        _ => {}
    }
    if let Err(ServiceError::Table(TableError::Rule(_))) = &submitted {
        // Refused, but the player is back: a bot holding the seat gives it up.
        let _ = api.tables.reclaim(id, &caller).await;
    }
    let outcome = submitted.map_err(status_of)?;
    Ok(Response::new(pb::SubmitCommandResponse {
        version: outcome.summary.version as i64,
        penalties: penalties_of(&outcome.events),
        events: outcome
            .events
            .iter()
            .map(|(_, shown)| event_to_proto(shown, &outcome.summary.table_id))
            .collect::<Result<_, _>>()?,
        view: (form != pb::SeatViewForm::None).then(|| view_in(&outcome, form)),
    }))
}

pub(super) async fn list_legal_actions(
    api: &TableApi,
    request: Request<pb::ListLegalActionsRequest>,
) -> Result<Response<pb::ListLegalActionsResponse>, Status> {
    let caller = caller(&request)?;
    let id = table_id(&request.get_ref().table, "table")?;
    let (version, hints) = api.tables.hints(id, &caller).await.map_err(status_of)?;
    let actions = hints
        .map(|h| {
            // The engine says what each action charges the caller if submitted now.
            h.actions()
                .filter_map(|(c, penalty)| {
                    Some(pb::LegalAction {
                        command: Some(command_to_proto(c)?),
                        hint: hint_text(c, penalty),
                        penalty_points: penalty,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Response::new(pb::ListLegalActionsResponse {
        version: version as i64,
        actions,
    }))
}

pub(super) async fn submit_client_seed(
    api: &TableApi,
    request: Request<pb::SubmitClientSeedRequest>,
) -> Result<Response<pb::SubmitClientSeedResponse>, Status> {
    let caller = caller(&request)?;
    let r = request.into_inner();
    let id = table_id(&r.table, "table")?;
    let rid = request_id(&r.request_id)?;
    let hand_number = hand_number_arg(r.hand_number)?;
    let seed = client_seed_arg(&r.seed)?;
    let command = TableCommand::ClientSeed {
        player: caller.clone(),
        hand_number,
        seed,
    };
    let outcome = api
        .tables
        .submit(Submission::new(id, &caller, rid, command))
        .await
        .map_err(status_of)?;
    Ok(Response::new(pb::SubmitClientSeedResponse {
        version: outcome.summary.version as i64,
        server_seed_sha256: outcome
            .summary
            .next_server_seed_sha256
            .clone()
            .unwrap_or_default(),
    }))
}
