-- Version 1: the event log, the records, the checkpoint's watermark, the
-- leases of the repositories and the nodes that serve them. Every table is
-- keyed by repository: one database serves many. Text columns sort byte by
-- byte (COLLATE "C"), whatever the database's locale, as SQLite does.

CREATE TABLE wilco_events (
	repo    text COLLATE "C" NOT NULL,
	seq     bigint NOT NULL,
	time    bigint,            -- Unix nanoseconds; NULL for the zero time
	type    text COLLATE "C" NOT NULL,
	task_id text COLLATE "C" NOT NULL,
	agent   text COLLATE "C" NOT NULL,
	data    bytea,
	PRIMARY KEY (repo, seq)
);
CREATE INDEX wilco_events_task ON wilco_events (repo, task_id, seq) WHERE task_id <> '';

CREATE TABLE wilco_records (
	repo    text COLLATE "C" NOT NULL,
	kind    text COLLATE "C" NOT NULL,
	id      text COLLATE "C" NOT NULL,
	state   text COLLATE "C" NOT NULL,
	agent   text COLLATE "C" NOT NULL,
	task_id text COLLATE "C" NOT NULL,
	data    bytea,
	PRIMARY KEY (repo, kind, id)
);

CREATE TABLE wilco_meta (
	repo  text COLLATE "C" NOT NULL,
	key   text COLLATE "C" NOT NULL,
	value bigint NOT NULL,
	PRIMARY KEY (repo, key)
);

-- One lease per repository: the node that holds it is the only one that
-- writes the repository's log. token goes up by one at each acquisition;
-- a write carries the token it was made under and is refused when the
-- lease has moved on or expired (wilco_fence). Times are the database's
-- clock, so that the nodes' clocks need not agree.
CREATE TABLE wilco_leases (
	repo        text COLLATE "C" PRIMARY KEY,
	holder      text NOT NULL,
	url         text NOT NULL,
	token       bigint NOT NULL,
	acquired_at timestamptz NOT NULL,
	renewed_at  timestamptz NOT NULL,
	expires_at  timestamptz NOT NULL
);

-- The nodes that serve a repository, active or standby, as they last said.
CREATE TABLE wilco_nodes (
	node       text COLLATE "C" PRIMARY KEY,
	repo       text COLLATE "C" NOT NULL,
	url        text NOT NULL,
	version    text NOT NULL,
	started_at timestamptz NOT NULL,
	seen_at    timestamptz NOT NULL
);

-- wilco_fence refuses a commit to repository r unless token t still holds
-- its lease (not taken over, not expired) and the log ends at seq last. It
-- locks the lease row for the rest of the transaction, so that a takeover
-- waits for the commit, and the commit for the takeover.
CREATE FUNCTION wilco_fence(r text, t bigint, last bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	held bigint;
	expires timestamptz;
	ends bigint;
BEGIN
	SELECT token, expires_at INTO held, expires FROM wilco_leases WHERE repo = r FOR SHARE;
	IF NOT FOUND OR held <> t OR expires <= clock_timestamp() THEN
		RAISE EXCEPTION 'wilco: fencing token % of repository % is stale (the lease holds token %, expiring %)', t, r, held, expires
			USING ERRCODE = 'WL001';
	END IF;
	SELECT coalesce(max(seq), 0) INTO ends FROM wilco_events WHERE repo = r;
	IF ends <> last THEN
		RAISE EXCEPTION 'wilco: the log of repository % ends at %, not %', r, ends, last
			USING ERRCODE = 'WL002';
	END IF;
END
$$;
