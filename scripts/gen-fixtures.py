#!/usr/bin/env python3
"""Generates fixtures/*.json: the data models of the five seed apps as Firestore REST
document JSON. Deterministic (fixed seed), so regenerating gives the same files.

Usage: python3 scripts/gen-fixtures.py [OUTDIR]
"""
import json, os, random, sys
from datetime import datetime, timedelta, timezone

rng = random.Random(20261121)
BASE = datetime(2026, 1, 5, 9, 0, 0, tzinfo=timezone.utc)


def ts(days=0, minutes=0):
    t = BASE + timedelta(days=days, minutes=minutes)
    return {"timestampValue": t.strftime("%Y-%m-%dT%H:%M:%SZ")}


def v(x):
    """A Python value as a Firestore REST value."""
    if x is None:
        return {"nullValue": None}
    if isinstance(x, dict) and len(x) == 1 and next(iter(x)).endswith("Value"):
        return x
    if isinstance(x, bool):
        return {"booleanValue": x}
    if isinstance(x, int):
        return {"integerValue": str(x)}
    if isinstance(x, float):
        return {"doubleValue": x}
    if isinstance(x, str):
        return {"stringValue": x}
    if isinstance(x, list):
        return {"arrayValue": {"values": [v(i) for i in x]}} if x else {"arrayValue": {}}
    if isinstance(x, dict):
        return {"mapValue": {"fields": {k: v(i) for k, i in x.items()}}}
    raise TypeError(x)


def doc(path, fields):
    return {"name": path, "fields": {k: v(x) for k, x in fields.items()}}


def write(outdir, name, description, docs):
    names = [d["name"] for d in docs]
    assert len(names) == len(set(names)), name
    with open(os.path.join(outdir, name), "w") as f:
        json.dump({"description": description, "documents": docs}, f, indent=1, ensure_ascii=False)
        f.write("\n")


FIRST = ["Asha", "Ravi", "Meera", "Kiran", "Dev", "Priya", "Arjun", "Nina", "Omar", "Lena",
         "Sam", "Tara", "Yusuf", "Ivy", "Chen", "Zoe", "Noah", "Maya", "Leo", "Ana"]
LAST = ["Rao", "Iyer", "Shah", "Khan", "Patel", "Garcia", "Kim", "Singh", "Lopez", "Nair"]


def bookstore():
    docs = []
    societies = ["soc_green", "soc_lake", "soc_hill"]
    for i, s in enumerate(societies):
        docs.append(doc(f"societies/{s}", {
            "name": ["Green Meadows", "Lakeview Heights", "Hillside Enclave"][i],
            "address": f"{10 + i} Main Road", "city": "Pune", "state": "MH", "pincode": f"41100{i}",
            "totalBlocks": ["A", "B", "C"][: i + 1], "amenities": ["library", "gym"][: 2 - i % 2],
            "createdAt": ts(-300 + i)}))
    users = []
    for i in range(12):
        uid = f"user_{i:02d}"
        soc = societies[i % 3]
        users.append((uid, soc))
        docs.append(doc(f"users/{uid}", {
            "name": f"{FIRST[i]} {LAST[i % 10]}", "email": f"{FIRST[i].lower()}@example.com" if i % 4 else "",
            "phoneNumber": f"+9198000000{i:02d}", "societyId": soc,
            "societyName": ["Green Meadows", "Lakeview Heights", "Hillside Enclave"][i % 3],
            "blockName": "A", "flatNumber": f"{100 + i}", "profileImageURL": "", "isActive": i != 11,
            "createdAt": ts(-200 + i), "lastLoginAt": ts(-1, i) if i % 3 else None,
            "fcmToken": f"fcm-token-{i}" if i % 2 else "", "lastTokenUpdate": ts(-2) if i % 2 else None}))
    genres = ["Fiction", "Mystery", "Science", "History", "Children"]
    conditions = ["New", "Good", "Fair"]
    books = []
    for i in range(40):
        owner, soc = users[i % 12]
        bid = f"book_{i:03d}"
        available = i % 4 != 0
        books.append((bid, owner, soc, available))
        fields = {
            "title": f"Book Title {i}", "author": f"Author {i % 9}", "genre": genres[i % 5],
            "description": f"A {genres[i % 5].lower()} book in {conditions[i % 3].lower()} condition.",
            "imageURL": f"https://storage.example/books/{bid}.jpg", "isAvailable": available,
            "ownerId": owner, "ownerName": f"{FIRST[i % 12]} {LAST[(i % 12) % 10]}",
            "ownerFlatNumber": f"{100 + i % 12}", "societyId": soc, "createdAt": ts(-100 + i),
            "condition": conditions[i % 3]}
        if i % 5 == 0:
            fields["updatedAt"] = ts(-50 + i)
        docs.append(doc(f"books/{bid}", fields))
    statuses = ["pending", "approved", "rejected", "returned", "overdue"]
    for i in range(25):
        bid, owner, soc, _ = books[(i * 3) % 40]
        borrower = next(u for u, s in users[(i + 1) % 12:] + users if s == soc and u != owner)
        st = statuses[i % 5]
        fields = {"bookId": bid, "borrowerId": borrower, "borrowerName": borrower.replace("_", " "),
                  "borrowerFlatNumber": "1" + borrower[-2:], "ownerId": owner, "societyId": soc,
                  "requestDate": ts(-30 + i), "status": st}
        if st != "pending":
            fields["responseDate"] = ts(-29 + i)
        if st in ("approved", "overdue"):
            fields["dueDate"] = ts(-15 + i if st == "overdue" else 14 + i)
        if st == "returned":
            fields["returnDate"] = ts(-5 + i // 5)
        if i % 3 == 0:
            fields["notes"] = "Please handle with care."
        docs.append(doc(f"bookRequests/req_{i:03d}", fields))
    types = ["book_request", "request_approved", "request_rejected", "return_reminder", "overdue", "book_returned"]
    for i in range(30):
        uid, soc = users[i % 12]
        docs.append(doc(f"notifications/notif_{i:03d}", {
            "userId": uid, "type": types[i % 6], "title": types[i % 6].replace("_", " ").title(),
            "message": f"Notification {i} for {uid}", "isRead": i % 3 == 0,
            "relatedId": f"req_{i % 25:03d}", "createdAt": ts(-20 + i // 2, i), "societyId": soc}))
    return docs


def vibes():
    docs = []
    names = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"]
    uids = [f"uid_{n}" for n in names]
    for i, (uid, n) in enumerate(zip(uids, names)):
        docs.append(doc(f"users/{uid}", {
            "uid": uid, "email": f"{n}@vibes.example", "username": n, "displayName": n.title(),
            "bio": f"{n.title()} loves music" if i % 2 == 0 else None, "spotifyLinked": i % 3 == 0,
            "favoriteArtists": ["Artist A", "Artist B", "Artist C"][: 1 + i % 3],
            "favoriteSongs": [f"song_{i}"], "favoriteAlbums": [], "musicTasteTags": ["indie", "jazz", "pop"][i % 3:],
            "pinnedSongs": [], "createdAt": ts(-90 + i), "updatedAt": ts(-10 + i),
            "privacySettings": {"profileVisibility": ["friends", "public"][i % 2], "showNowPlaying": True,
                                "showListeningStats": i % 4 != 0, "allowFriendRequests": "everyone"},
            "fcmToken": f"tok_{n}"}))
    pairs = [(0, 1), (0, 2), (1, 3), (2, 4), (3, 5), (4, 6), (5, 7), (6, 8), (7, 9), (0, 9), (1, 8), (2, 7)]
    for i, (a, b) in enumerate(pairs):
        accepted = i % 4 != 3
        fields = {"userId": uids[a], "friendId": uids[b], "status": "accepted" if accepted else "pending",
                  "initiatorId": uids[a], "vibestreak": (i * 3) % 11, "compatibilityScore": round(0.4 + i * 0.05, 2),
                  "sharedArtists": ["Artist A"] if i % 2 == 0 else [], "createdAt": ts(-60 + i)}
        if accepted:
            fields["acceptedAt"] = ts(-59 + i)
            fields["lastInteractionDate"] = ts(-3 + i % 3)
        docs.append(doc(f"friendships/fr_{i:02d}", fields))
    threads = [(0, 1), (0, 2), (1, 3), (2, 4), (0, 9)]
    for t, (a, b) in enumerate(threads):
        tid = f"thread_{t}"
        msgs = []
        for m in range(6):
            sender, recipient = (uids[a], uids[b]) if m % 2 == 0 else (uids[b], uids[a])
            kind = "song" if m % 3 == 0 else "text"
            fields = {"threadId": tid, "senderId": sender, "recipientId": recipient, "messageType": kind,
                      "content": f"spotify:track:{t}{m}" if kind == "song" else f"message {m} in {tid}",
                      "reactions": {recipient: "fire"} if m % 4 == 0 else {}, "timestamp": ts(-5 + t, m * 7),
                      "read": m < 4}
            if kind == "song":
                fields["caption"] = "listen to this"
                fields["rating"] = 3 + m % 3
            msgs.append(doc(f"messages/msg_{t}_{m}", fields))
        docs.extend(msgs)
        docs.append(doc(f"messageThreads/{tid}", {
            "userId1": uids[a], "userId2": uids[b], "lastMessageTimestamp": ts(-5 + t, 35),
            "lastMessageContent": f"message 5 in {tid}", "lastMessageType": "text",
            "unreadCountUser1": 1, "unreadCountUser2": 0, "createdAt": ts(-40 + t)}))
    for i, uid in enumerate(uids[:6]):
        docs.append(doc(f"nowPlaying/{uid}", {
            "spotifyTrackId": f"trk_{i}", "trackName": f"Track {i}", "artistName": f"Artist {chr(65 + i)}",
            "albumArt": f"https://img.example/{i}.jpg", "isPlaying": i % 2 == 0, "timestamp": ts(0, i),
            "progressMs": 30000 * i, "durationMs": 210000}))
    for i, uid in enumerate(uids[:5]):
        for d in range(7):
            date = (BASE + timedelta(days=d)).strftime("%Y-%m-%d")
            docs.append(doc(f"listeningStats/{uid}__{date}", {
                "userId": uid, "date": date, "totalListeningTimeMs": 600000 * (1 + (i + d) % 5),
                "topArtists": [{"name": "Artist A", "plays": 3 + d}], "topSongs": [{"id": f"s{d}", "plays": 2}],
                "topGenres": [{"genre": "indie", "share": 0.5}], "songsSent": d % 3, "songsReceived": (d + i) % 4,
                "uniqueArtistsListened": 5 + d, "updatedAt": ts(d, 60)}))
    for i, uid in enumerate(uids[:4]):
        for kind in ["first_song", "streak_7"][: 1 + i % 2]:
            docs.append(doc(f"achievements/{uid}__{kind}", {
                "userId": uid, "achievementType": kind, "unlockedAt": ts(-7 + i), "progress": 100,
                "metadata": {"source": "seed"}}))
        docs.append(doc(f"weeklyRecaps/{uid}__2026-01-05", {
            "userId": uid, "weekStart": "2026-01-05", "weekEnd": "2026-01-12",
            "topSongs": [{"id": "s1", "plays": 9}], "topArtist": {"name": "Artist A"},
            "totalListeningTimeMs": 7200000 + i, "topFriendInteractions": [{"friendId": uids[i + 1], "count": 3}],
            "createdAt": ts(7)}))
    for i in range(15):
        a, b = pairs[i % len(pairs)]
        docs.append(doc(f"notifications/vn_{i:02d}", {
            "userId": uids[b], "notificationType": ["friend_request", "song_received", "achievement"][i % 3],
            "relatedId": f"fr_{i % 12:02d}", "content": f"Notification {i}", "title": "Vibes",
            "timestamp": ts(-4 + i // 4, i), "read": i % 2 == 0, "actionURL": "vibes://notifications"}))
        docs.append(doc(f"interactions/int_{i:02d}", {
            "friendshipId": f"fr_{i % 12:02d}", "userId": uids[a], "interactionType": ["song", "message"][i % 2],
            "timestamp": ts(-3 + i // 5, i)}))
    return docs


def lifesignal():
    docs = []
    uids = [f"ls_user_{i}" for i in range(8)]
    for i, uid in enumerate(uids):
        fields = {"firstName": FIRST[i], "lastName": LAST[i], "phoneNumber": f"+1555010{i:04d}",
                  "lastCheckInTime": ts(0, -60 * i), "checkInInterval": 86400.0 if i % 2 else 43200.0,
                  "reminderInterval": 7200.0, "createdAt": ts(-120 + i), "updatedAt": ts(-1, i)}
        if i % 3 == 0:
            fields["emergencyNote"] = "Allergic to penicillin"
        if i % 2 == 0:
            fields["profilePictureURL"] = f"https://img.example/ls/{uid}.png"
        if i % 4 == 1:
            fields["fcmToken"] = f"fcm_{uid}"
        docs.append(doc(f"users/{uid}", fields))
    for i in range(14):
        a, b = i % 8, (i * 3 + 1) % 8
        if a == b:
            b = (b + 1) % 8
        docs.append(doc(f"contacts/ct_{i:02d}", {
            "userId": uids[a], "contactId": uids[b], "isResponder": i % 2 == 0, "isDependent": i % 3 == 0,
            "createdAt": ts(-60 + i), "updatedAt": ts(-10 + i)}))
    for i in range(24):
        uid = uids[i % 8]
        docs.append(doc(f"checkIns/ci_{i:02d}", {"userId": uid, "timestamp": ts(-(i // 8), -i * 13), "createdAt": ts(-(i // 8), -i * 13)}))
    for i in range(5):
        docs.append(doc(f"alerts/al_{i}", {"userId": uids[i], "timestamp": ts(-i), "isActive": i < 2,
                                            "createdAt": ts(-i), "updatedAt": ts(-i, 30)}))
    for i in range(10):
        fields = {"senderId": uids[i % 8], "recipientId": uids[(i + 2) % 8], "timestamp": ts(-1, i * 5),
                  "isResponded": i % 2 == 0, "createdAt": ts(-1, i * 5)}
        if i % 2 == 0:
            fields["respondedAt"] = ts(-1, i * 5 + 3)
        docs.append(doc(f"pings/pg_{i:02d}", fields))
    kinds = ["alert", "ping", "role", "removed", "added", "checkIn"]
    for i in range(12):
        fields = {"userId": uids[i % 8], "type": kinds[i % 6], "timestamp": ts(-1, i), "isRead": i % 3 == 0,
                  "createdAt": ts(-1, i)}
        if kinds[i % 6] != "checkIn":
            fields["relatedUserId"] = uids[(i + 1) % 8]
        docs.append(doc(f"notifications/ln_{i:02d}", fields))
    return docs


def halloo():
    docs = []
    for u in range(4):
        uid = f"family_{u}"
        nprofiles = [2, 1, 3, 0][u]
        completed = 0
        for p in range(nprofiles):
            phone = f"+1555{u}{p}0{u}{p}{u}{p}0"
            base = f"users/{uid}/profiles/{phone}"
            docs.append(doc(base, {
                "id": phone, "userId": uid, "name": f"{FIRST[u * 3 + p]} (elder)", "phoneNumber": phone,
                "relationship": ["Mother", "Father", "Grandmother"][p % 3],
                "status": "confirmed" if p % 2 == 0 else "pendingConfirmation",
                "timeZone": "America/New_York", "createdAt": ts(-80 + u * 5 + p), "updatedAt": ts(-2, p)}))
            nhabits = 5 if u != 0 else 7
            for h in range(nhabits):
                hid = f"{u}{p}{h:02d}aaaa-0000-4000-8000-{u:04d}{p:04d}{h:04d}"
                status = "completed" if h % 4 == 3 else "active"
                completed += status == "completed"
                docs.append(doc(f"{base}/habits/{hid}", {
                    "id": hid, "userId": uid, "profileId": phone,
                    "title": ["Take medication", "Drink water", "Walk 10 minutes", "Call family", "Eat lunch",
                              "Stretch", "Check blood pressure"][h],
                    "category": ["medication", "hydration", "exercise", "social", "meal", "exercise", "health"][h],
                    "frequency": "daily" if h % 2 == 0 else "weekdays", "scheduledTime": ts(0, 60 * (8 + h)),
                    "nextScheduledDate": ts(h % 3 - 1, 60 * (8 + h)), "status": status,
                    "requiresPhoto": h % 3 == 0, "createdAt": ts(-30 + h)}))
            for m in range(6):
                mid = f"SM{u}{p}{m:02d}{'f' * 28}"
                docs.append(doc(f"{base}/messages/{mid}", {
                    "id": mid, "userId": uid, "profileId": phone, "taskId": f"{u}{p}{m % nhabits:02d}aaaa-0000-4000-8000-{u:04d}{p:04d}{m % nhabits:04d}",
                    "textResponse": ["Done", "Yes", "Taken", "OK", "Later", "Done!"][m],
                    "responseType": "text" if m % 3 else "photo", "isCompleted": m != 4,
                    "receivedAt": ts(-m, 30 + p)}))
        for g in range(3 if nprofiles else 0):
            docs.append(doc(f"users/{uid}/gallery_events/ge_{u}_{g}", {
                "userId": uid, "eventType": ["taskResponse", "profileCreated", "taskResponse"][g],
                "profileId": f"+1555{u}00{u}0{u}00", "createdAt": ts(-g, 15), "photoURL": f"https://img.example/g/{u}{g}.jpg"}))
        docs.append(doc(f"users/{uid}", {
            "email": f"{uid}@halloo.example", "fullName": f"{FIRST[u + 10]} {LAST[u]}",
            "profileCount": nprofiles, "completedHabitCount": completed, "subscriptionStatus": ["trial", "active"][u % 2],
            "createdAt": ts(-100 + u), "updatedAt": ts(-1, u)}))
    return docs


def messageai():
    docs = []
    uids = [f"mai_{n}" for n in ["ana", "ben", "cai", "dee", "eli", "fay", "gus"]]
    for i, uid in enumerate(uids):
        docs.append(doc(f"users/{uid}", {
            "email": f"{uid[4:]}@chat.example", "displayName": uid[4:].title(), "isOnline": i % 2 == 0,
            "lastSeen": ts(0, -i * 10), "lastHeartbeat": ts(0, -i), "blockedUsers": [uids[6]] if i == 0 else [],
            "showOnlineStatus": i != 3, "status": "Available" if i % 3 else None}))
    convs = [(False, [0, 1]), (False, [0, 2]), (False, [1, 2]), (True, [0, 1, 2, 3]), (False, [3, 4]),
             (True, [2, 4, 5, 6]), (False, [0, 5]), (False, [5, 6])]
    for c, (group, members) in enumerate(convs):
        cid = f"conv_{c}"
        parts = [uids[m] for m in members]
        nmsg = 4 + c % 4
        fields = {"isGroup": group, "participantIDs": parts, "lastMessage": f"msg {nmsg - 1} in {cid}",
                  "lastMessageTime": ts(-c, 10 * nmsg), "lastSenderID": parts[(nmsg - 1) % len(parts)],
                  "lastMessageID": f"{cid}_m{nmsg - 1}", "unreadBy": parts[1:2], "deletedBy": [],
                  "typingUsers": [parts[0]] if c == 0 else []}
        if group:
            fields["name"] = f"Group {c}"
            fields["creatorID"] = parts[0]
        docs.append(doc(f"conversations/{cid}", fields))
        for m in range(nmsg):
            sender = parts[m % len(parts)]
            docs.append(doc(f"conversations/{cid}/messages/{cid}_m{m}", {
                "conversationID": cid, "senderID": sender, "content": f"msg {m} in {cid}",
                "timestamp": ts(-c, 10 * (m + 1)), "statusRaw": "read" if m < nmsg - 1 else "delivered",
                "type": "text" if m % 3 else "image", "readBy": parts[: 1 + m % len(parts)],
                "reactions": {"👍": [parts[-1]]} if m == 1 else {}, "deletedFor": [], "deletedForEveryone": False}))
    return docs


if __name__ == "__main__":
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "fixtures")
    os.makedirs(outdir, exist_ok=True)
    write(outdir, "000-bookstore.json", "Bookstore: societies, users, books, bookRequests, notifications.", bookstore())
    write(outdir, "001-vibes.json", "Vibes music social app: users, friendships, messageThreads, messages, nowPlaying, listeningStats, achievements, weeklyRecaps, notifications, interactions.", vibes())
    write(outdir, "002-lifesignal.json", "LifeSignal safety check-ins: users, contacts, checkIns, alerts, pings, notifications.", lifesignal())
    write(outdir, "003-halloo.json", "Halloo elderly care: users/{uid}/profiles/{phone}/habits|messages and users/{uid}/gallery_events.", halloo())
    write(outdir, "004-messageai.json", "MessageAI chat: users, conversations and conversations/{id}/messages.", messageai())
