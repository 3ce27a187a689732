//! Table and partner chat: sending, and the chat stream.

use super::*;

pub(super) async fn send_chat_message(
    api: &TableApi,
    request: Request<pb::SendChatMessageRequest>,
) -> Result<Response<pb::SendChatMessageResponse>, Status> {
    let caller = caller(&request)?;
    let r = request.into_inner();
    // A text over the chat's limit is `chat_too_long` however long it is; only then is the
    // request held to the command size limit.
    if let Some((_, chat)) = &api.live {
        chat.checked_text(&r.text).map_err(status_of)?;
    }
    not_too_large(&r)?;
    let id = table_id(&r.table, "table")?;
    let rid = request_id(&r.request_id)?;
    let partner = match pb::ChatChannel::try_from(r.channel) {
        Ok(pb::ChatChannel::Table) => false,
        Ok(pb::ChatChannel::Partner) => true,
        Ok(pb::ChatChannel::Unspecified) => {
            return Err(status::invalid_argument(
                Reason::MissingField,
                "channel",
                "name the channel: CHAT_CHANNEL_TABLE or CHAT_CHANNEL_PARTNER",
            ));
        }
        Err(_) => {
            return Err(status::invalid_argument(
                Reason::InvalidChannel,
                "channel",
                format!(
                    "unknown channel {}: use CHAT_CHANNEL_TABLE or CHAT_CHANNEL_PARTNER",
                    r.channel
                ),
            ));
        }
    };
    let (_, chat) = api.live()?;
    let table = api.tables.state(id).await.map_err(status_of)?;
    let seat = table
        .seat_of(&caller)
        .ok_or_else(|| status_of(TableError::NotSeated))?;
    api.seen(id, &caller);
    let message = chat
        .send(
            id,
            &caller,
            seat,
            &table.seats,
            table.rules.partners,
            partner,
            rid,
            &r.text,
        )
        .await
        .map_err(status_of)?;
    Ok(Response::new(pb::SendChatMessageResponse {
        message: Some(chat_to_proto(&message)),
    }))
}

pub(super) async fn watch_chat(
    api: &TableApi,
    request: Request<pb::WatchChatRequest>,
) -> Result<Response<ChatStream>, Status> {
    let caller = caller(&request)?;
    let id = table_id(&request.get_ref().table, "table")?;
    let (_, chat) = api.live()?;
    let seat = api
        .tables
        .seat_of(id, &caller)
        .await
        .map_err(status_of)?
        .ok_or_else(|| status_of(TableError::NotSeated))?;
    // Only a stream of a table that exists, to a seated caller, counts against the limit.
    let slot = api.streams.take(&caller)?;
    let tables = api.tables.clone();
    let reader = caller.clone();
    let seat_now: SeatNow = std::sync::Arc::new(move || {
        let (tables, caller) = (tables.clone(), caller.clone());
        Box::pin(async move { tables.seat_of(id, &caller).await.map_err(|e| e.to_string()) })
    });
    let rx = chat
        .watch(id, &reader, seat, seat_now)
        .await
        .map_err(status_of)?;
    use tonic::codegen::tokio_stream::StreamExt;
    let stream = ReceiverStream::new(rx).map(move |m| {
        let _open = &slot;
        Ok(pb::WatchChatResponse {
            message: Some(chat_to_proto(&m.map_err(status_of)?)),
        })
    });
    Ok(Response::new(Box::pin(stream)))
}
