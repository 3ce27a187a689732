//! Seats: creating a table, sitting down, leaving.

use super::*;
use crate::service::Seating;

pub(super) async fn create_table(
    api: &TableApi,
    request: Request<pb::CreateTableRequest>,
) -> Result<Response<pb::CreateTableResponse>, Status> {
    // The authentication layer let only `admin` and `matchmaker` callers through.
    let admission_caller = request.extensions().get::<Caller>().cloned();
    let caller = caller(&request)?;
    let r = request.into_inner();
    not_too_large(&r)?;
    let id = request_id(&r.request_id)?;
    let rules = rules_from_proto(r.rules.as_ref())?;
    let admission = admission_from_proto(&r, admission_caller.as_ref())?;
    let mut seats: [Option<String>; 4] = Default::default();
    let mut names: [Option<String>; 4] = Default::default();
    for (i, a) in r.seats.iter().enumerate() {
        let seat = seat_arg(a.seat, &format!("seats[{i}].seat"))?;
        match &a.occupant {
            Some(pb::seat_assignment::Occupant::Player(p)) if !p.is_empty() => {
                let p = fields::player(&format!("seats[{i}].player"), p)?;
                if !admission.may_sit(&p) {
                    return Err(status::invalid_argument(
                        Reason::InvalidRules,
                        &format!("seats[{i}].player"),
                        format!("{p} is not one of the table's members: seat only members"),
                    ));
                }
                names[seat as usize] =
                    seated_name(&format!("seats[{i}].display_name"), &a.display_name)?;
                if seats.contains(&Some(p.clone())) {
                    return Err(status::invalid_argument(
                        Reason::InvalidSeat,
                        &format!("seats[{i}].player"),
                        format!("{p} is given two seats: a player sits at most once"),
                    ));
                }
                if seats[seat as usize].replace(p).is_some() {
                    return Err(status::invalid_argument(
                        Reason::InvalidSeat,
                        &format!("seats[{i}].seat"),
                        "a seat is assigned twice",
                    ));
                }
            }
            Some(pb::seat_assignment::Occupant::Bot(level)) => {
                let level = bot_level_from_proto(*level, &format!("seats[{i}].bot"))?;
                let name = level.occupant(seat);
                if seats[seat as usize].replace(name).is_some() {
                    return Err(status::invalid_argument(
                        Reason::InvalidSeat,
                        &format!("seats[{i}].seat"),
                        "a seat is assigned twice",
                    ));
                }
            }
            _ => {
                return Err(status::invalid_argument(
                    Reason::MissingField,
                    &format!("seats[{i}].player"),
                    "name a player as players/{id}, or set bot",
                ));
            }
        }
    }
    if let Some(level) = r.empty_seat_bots {
        let level = bot_level_from_proto(level, "empty_seat_bots")?;
        for (seat, occupant) in seats.iter_mut().enumerate() {
            if occupant.is_none() {
                *occupant = Some(level.occupant(seat as u8));
            }
        }
    }
    let outcome = api
        .tables
        .create(&caller, id, rules, Seating { seats, names }, admission)
        .await
        .map_err(status_of)?;
    Ok(Response::new(pb::CreateTableResponse {
        table: Some(table_to_proto(&outcome.summary)),
    }))
}

/// A seated player's display name as CreateTable's `seats` give it ([`fields::display_name`]),
/// `None` when empty; otherwise INVALID_ARGUMENT `invalid_display_name`.
fn seated_name(field: &str, name: &str) -> Result<Option<String>, Status> {
    let name = fields::display_name(name)
        .map_err(|problem| status::invalid_argument(Reason::InvalidDisplayName, field, problem))?;
    Ok((!name.is_empty()).then(|| name.to_owned()))
}

pub(super) async fn join_seat(
    api: &TableApi,
    request: Request<pb::JoinSeatRequest>,
) -> Result<Response<pb::JoinSeatResponse>, Status> {
    let caller = caller(&request)?;
    let name = caller_name(&request);
    let r = request.into_inner();
    let id = table_id(&r.table, "table")?;
    let rid = request_id(&r.request_id)?;
    let seat = r.seat.map(|s| seat_arg(s, "seat")).transpose()?;
    let command = TableCommand::Join {
        name,
        player: caller.clone(),
        seat,
    };
    let outcome = api
        .tables
        .submit(Submission::new(id, &caller, rid, command))
        .await
        .map_err(status_of)?;
    // Sitting down is a command: the player is seen (PRESENCE_CONNECTED).
    api.seen(id, &caller);
    Ok(Response::new(pb::JoinSeatResponse {
        view: Some(view_to_proto(&outcome)),
    }))
}

pub(super) async fn leave_seat(
    api: &TableApi,
    request: Request<pb::LeaveSeatRequest>,
) -> Result<Response<pb::LeaveSeatResponse>, Status> {
    let caller = caller(&request)?;
    let r = request.into_inner();
    let id = table_id(&r.table, "table")?;
    let rid = request_id(&r.request_id)?;
    let command = TableCommand::Leave {
        player: caller.clone(),
    };
    api.tables
        .submit(Submission::new(id, &caller, rid, command))
        .await
        .map_err(status_of)?;
    Ok(Response::new(pb::LeaveSeatResponse {}))
}
