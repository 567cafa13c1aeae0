-- The davspaces metadata schema, version 1. Every statement is idempotent:
-- migrate runs this file in one transaction under an advisory lock, so
-- nodes starting together create it once.

CREATE TABLE IF NOT EXISTS meta (
	key   text PRIMARY KEY,
	value text NOT NULL
);

CREATE TABLE IF NOT EXISTS spaces (
	id                 text PRIMARY KEY,
	type               text NOT NULL,
	name               text NOT NULL,
	owner              text NOT NULL DEFAULT '',
	owner_display_name text NOT NULL DEFAULT '',
	quota              bigint NOT NULL,
	-- user or "group:<name>" -> role (storage.Role as a number)
	members            jsonb NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX IF NOT EXISTS spaces_personal ON spaces (owner) WHERE type = 'personal';

-- A space's root node has the space's id, no parent and an empty name.
-- Names sort in byte order (COLLATE "C"), as ReadDir pages by name.
CREATE TABLE IF NOT EXISTS nodes (
	id           text PRIMARY KEY,
	space_id     text NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	parent_id    text REFERENCES nodes (id) ON DELETE CASCADE,
	name         text COLLATE "C" NOT NULL,
	kind         smallint NOT NULL,
	size         bigint NOT NULL DEFAULT 0,
	mtime        timestamptz NOT NULL,
	etag         text NOT NULL,
	content_type text NOT NULL DEFAULT '',
	sha1         text NOT NULL DEFAULT '',
	md5          text NOT NULL DEFAULT '',
	adler32      text NOT NULL DEFAULT '',
	-- a file's content: the objects it is made of, in order, as
	-- [{"k": key, "n": size}] (s3content.Segment)
	content      jsonb NOT NULL DEFAULT '[]'
);
CREATE UNIQUE INDEX IF NOT EXISTS nodes_children ON nodes (parent_id, name);
-- A COPY shares its source's objects; an object is released only when no
-- node's content holds it any more.
CREATE INDEX IF NOT EXISTS nodes_content ON nodes USING gin (content jsonb_path_ops);

-- Dead properties; user_id is empty for shared ones and a user's id for
-- those scoped to that user (favourites).
CREATE TABLE IF NOT EXISTS props (
	node_id text NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
	user_id text COLLATE "C" NOT NULL DEFAULT '',
	ns      text COLLATE "C" NOT NULL,
	local   text COLLATE "C" NOT NULL,
	value   text NOT NULL,
	PRIMARY KEY (node_id, user_id, ns, local)
);

CREATE TABLE IF NOT EXISTS locks (
	token      text PRIMARY KEY,
	space_id   text NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	node_id    text NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
	root       text NOT NULL,
	deep       boolean NOT NULL,
	scope      smallint NOT NULL,
	owner      text NOT NULL,
	user_id    text NOT NULL,
	user_name  text NOT NULL,
	created    timestamptz NOT NULL,
	timeout_ms bigint NOT NULL,
	expires    timestamptz -- NULL: never
);
CREATE INDEX IF NOT EXISTS locks_space ON locks (space_id);
-- The groups of the user who took a lock (storage.Lock.Groups), added after
-- version 1: a lock counts while its user is an editor of the space.
ALTER TABLE locks ADD COLUMN IF NOT EXISTS user_groups text[] NOT NULL DEFAULT '{}';

-- Resumable (TUS) uploads. The bytes received so far are the objects in
-- parts; hash_state carries the checksums of those bytes from append to
-- append (checksum.Writer's MarshalBinary), so no node reads them back.
CREATE TABLE IF NOT EXISTS upload_sessions (
	id         text PRIMARY KEY,
	space_id   text NOT NULL,
	user_id    text NOT NULL,
	length     bigint NOT NULL,
	received   bigint NOT NULL DEFAULT 0,
	target     jsonb NOT NULL,
	expected   jsonb,
	hash_state bytea NOT NULL,
	parts      jsonb NOT NULL DEFAULT '[]',
	created    timestamptz NOT NULL,
	expires_ns bigint -- Unix nanoseconds, exactly as the caller gave them; NULL: never
);

-- Chunked uploads (chunking NG, v1 chunks) and their parts. Upload ids
-- and part names come from URLs and may hold any byte (a NUL, invalid
-- UTF-8), which text cannot: they are bytea, which also sorts in byte
-- order. incarnation tells an upload from one created again under its id
-- while a part was being written for the first.
CREATE TABLE IF NOT EXISTS chunked_uploads (
	id          bytea PRIMARY KEY,
	incarnation text NOT NULL,
	user_id     text NOT NULL,
	claimed     boolean NOT NULL DEFAULT false,
	-- number of rows in chunks, kept so that a PutChunk need not count them
	parts       integer NOT NULL DEFAULT 0,
	created     timestamptz NOT NULL,
	expires_ns  bigint -- Unix nanoseconds, exactly as the caller gave them; NULL: never
);
CREATE TABLE IF NOT EXISTS chunks (
	upload_id bytea NOT NULL REFERENCES chunked_uploads (id) ON DELETE CASCADE,
	name      bytea NOT NULL,
	size      bigint NOT NULL,
	object    text NOT NULL, -- empty for an empty part, which needs none
	PRIMARY KEY (upload_id, name)
);

-- Objects no row references, to be deleted from the bucket once sweep_after
-- has passed: an object being written (recorded before its first byte is
-- sent, removed from here by the commit that references it, so a crash
-- mid-upload leaves a row that the sweep acts on), and an object whose last
-- reference went (kept a grace period for readers that opened it).
CREATE TABLE IF NOT EXISTS object_sweep (
	key         text PRIMARY KEY,
	sweep_after timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS object_sweep_due ON object_sweep (sweep_after);
-- written marks an object noted before its first byte was sent: its writer
-- may have died mid-way through a multipart upload, which the bucket keeps
-- unfinished until the sweep aborts it.
ALTER TABLE object_sweep ADD COLUMN IF NOT EXISTS written boolean NOT NULL DEFAULT false;

-- The sweep finds expired sessions and chunked uploads by these.
CREATE INDEX IF NOT EXISTS upload_sessions_expires ON upload_sessions (expires_ns) WHERE expires_ns IS NOT NULL;
CREATE INDEX IF NOT EXISTS chunked_uploads_expires ON chunked_uploads (expires_ns) WHERE expires_ns IS NOT NULL;

-- Usage accounting (storage.Usage). A space's dead properties are a
-- running counter changed with them; an unfinished upload reserves against
-- the space it will land in (upload_sessions.length; the greater of a
-- chunked upload's announced length and stored bytes; each less the size
-- of the file it replaces), summed by space;
-- a user's open uploads are counted by user.
ALTER TABLE spaces ADD COLUMN IF NOT EXISTS props_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE chunked_uploads ADD COLUMN IF NOT EXISTS space_id text NOT NULL DEFAULT '';
ALTER TABLE chunked_uploads ADD COLUMN IF NOT EXISTS length bigint NOT NULL DEFAULT 0;
ALTER TABLE chunked_uploads ADD COLUMN IF NOT EXISTS stored bigint NOT NULL DEFAULT 0;
ALTER TABLE chunked_uploads ADD COLUMN IF NOT EXISTS replaces bigint NOT NULL DEFAULT 0;
ALTER TABLE upload_sessions ADD COLUMN IF NOT EXISTS replaces bigint NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS upload_sessions_space ON upload_sessions (space_id);
CREATE INDEX IF NOT EXISTS upload_sessions_user ON upload_sessions (user_id);
CREATE INDEX IF NOT EXISTS chunked_uploads_space ON chunked_uploads (space_id);
CREATE INDEX IF NOT EXISTS chunked_uploads_user ON chunked_uploads (user_id);
-- A database from before the counters has them recounted, once.
DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM meta WHERE key = 'usage_counted') THEN
		UPDATE spaces s SET props_bytes = (
			SELECT coalesce(sum(octet_length(p.ns) + octet_length(p.local) + octet_length(p.value)), 0)
			FROM props p JOIN nodes n ON n.id = p.node_id WHERE n.space_id = s.id);
		UPDATE chunked_uploads c SET stored = (SELECT coalesce(sum(size), 0) FROM chunks WHERE upload_id = c.id);
		INSERT INTO meta (key, value) VALUES ('usage_counted', '1');
	END IF;
END $$;

-- Trash and versions (storage.Trash, storage.Versions). A space's trash
-- is a second tree of nodes: a deleted node and everything below it keep
-- their ids, properties and content, and the top node moves under the
-- root of the trash, whose id is the space's followed by "/trash"
-- (trashSpaceID), named by its trash key. Below it the nodes keep their
-- space's id: their root tells them from live ones (layout 2, at the end
-- of this file). No space id holds a "/" (storage.ValidID); the pseudo
-- space's row exists for the foreign key of the trash's root only. A
-- trash item's bytes are the trash root's size, kept by the same
-- propagation as a live root's. trash_items names each deleted top node
-- with where it was.
CREATE TABLE IF NOT EXISTS trash_items (
	space_id   text NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	key        text COLLATE "C" NOT NULL,
	node_id    text NOT NULL UNIQUE REFERENCES nodes (id) ON DELETE CASCADE,
	-- where the node was: its folder and name (storage.Reviving looks
	-- items up by them) and the path from the space's root
	parent_id  text NOT NULL,
	name       text COLLATE "C" NOT NULL,
	location   text NOT NULL,
	deleted_ns bigint NOT NULL, -- Unix nanoseconds, as in the key
	PRIMARY KEY (space_id, key)
);
CREATE INDEX IF NOT EXISTS trash_items_origin ON trash_items (space_id, parent_id, name);
CREATE INDEX IF NOT EXISTS trash_items_deleted ON trash_items (deleted_ns);
-- An item being purged (trash.go, purgeParts): gone for readers, its
-- subtree deleted from the bottom up in short transactions. One left
-- half purged by a node that stopped is finished by the next EmptyTrash
-- of its space or the sweep's next pass.
ALTER TABLE trash_items ADD COLUMN IF NOT EXISTS purging boolean NOT NULL DEFAULT false;
CREATE INDEX IF NOT EXISTS trash_items_purging ON trash_items (space_id) WHERE purging;

-- The content a file had before it was replaced, keyed by the file's id:
-- versions go with their file wherever it moves, the trash included, and
-- with it when it is destroyed. An object is released only when neither a
-- node nor a version holds it. space_id is the live space the versions
-- count in (spaces.versions_bytes, a running counter as props_bytes).
CREATE TABLE IF NOT EXISTS versions (
	file_id      text NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
	key          text COLLATE "C" NOT NULL,
	space_id     text NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	size         bigint NOT NULL,
	mtime        timestamptz NOT NULL,
	etag         text NOT NULL,
	content_type text NOT NULL DEFAULT '',
	sha1         text NOT NULL DEFAULT '',
	md5          text NOT NULL DEFAULT '',
	adler32      text NOT NULL DEFAULT '',
	content      jsonb NOT NULL DEFAULT '[]',
	replaced_ns  bigint NOT NULL, -- Unix nanoseconds, as in the key
	PRIMARY KEY (file_id, key)
);
CREATE INDEX IF NOT EXISTS versions_content ON versions USING gin (content jsonb_path_ops);
CREATE INDEX IF NOT EXISTS versions_space ON versions (space_id, replaced_ns);
CREATE INDEX IF NOT EXISTS versions_replaced ON versions (replaced_ns);
ALTER TABLE spaces ADD COLUMN IF NOT EXISTS versions_bytes bigint NOT NULL DEFAULT 0;
-- Every commit and purge asks these indexes whether an object is still
-- referenced. A pending list (fastupdate) would make each such lookup scan
-- every entry added since the last vacuum, and moving a large folder into
-- the trash adds one per node: entries go straight into the index instead.
-- Changed only where it is not yet, so that a node starting does not
-- wait for the index's lock.
DO $$
DECLARE
	idx text;
BEGIN
	FOREACH idx IN ARRAY ARRAY['nodes_content', 'versions_content'] LOOP
		IF NOT EXISTS (SELECT 1 FROM pg_class WHERE oid = to_regclass(idx)
				AND 'fastupdate=off' = ANY (coalesce(reloptions, '{}'))) THEN
			EXECUTE format('ALTER INDEX %I SET (fastupdate = off)', idx);
		END IF;
	END LOOP;
END $$;

-- Shares and links (storage.Shares), beside the tree: a share names its
-- item by id and follows it through moves. node_id has no foreign key: the
-- change that takes an item out of its space (into the trash or for good)
-- deletes the shares at and below it itself (deleteSharesBelow), walking
-- up from the space's few shares rather than down a large subtree, so
-- that no node's deletion asks this table about itself. Reads join nodes,
-- so a share whose item is not a live node of its space is never seen.
-- token is NULL for a share with a user or group; times are Unix
-- nanoseconds, exactly as the store made or the caller gave them.
CREATE TABLE IF NOT EXISTS shares (
	id            text PRIMARY KEY,
	kind          smallint NOT NULL,
	space_id      text NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	node_id       text NOT NULL,
	creator       text NOT NULL,
	role          smallint NOT NULL,
	grantee       text NOT NULL DEFAULT '',
	token         text,
	password_hash bytea,
	display_name  text NOT NULL DEFAULT '',
	expires_ns    bigint, -- NULL: never
	created_ns    bigint NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS shares_token ON shares (token);
CREATE INDEX IF NOT EXISTS shares_item ON shares (space_id, node_id);
CREATE INDEX IF NOT EXISTS shares_creator ON shares (creator);
CREATE INDEX IF NOT EXISTS shares_grantee ON shares (kind, grantee);
-- A user or group has one share of an item; a link (kind 3) is no share
-- with anybody.
CREATE UNIQUE INDEX IF NOT EXISTS shares_one_per_grantee ON shares (node_id, kind, grantee) WHERE kind <> 3;

-- The nodes a space keeps (storage.Usage.Nodes): those of the space and of
-- its trash, roots aside, and the versions of its files, a running counter
-- as props_bytes, held under the space's node cap (storage.NodeCap). A
-- database from before the counter has it counted, once.
ALTER TABLE spaces ADD COLUMN IF NOT EXISTS nodes bigint NOT NULL DEFAULT 0;
DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM meta WHERE key = 'nodes_counted') THEN
		UPDATE spaces s SET nodes =
			(SELECT count(*) FROM nodes n WHERE n.space_id IN (s.id, s.id || '/trash') AND n.parent_id IS NOT NULL)
			+ (SELECT count(*) FROM versions v WHERE v.space_id = s.id)
		WHERE s.type <> 'trash';
		INSERT INTO meta (key, value) VALUES ('nodes_counted', '1');
	END IF;
END $$;

-- The layout of the tree, version 2 (layout.go). A node's space_id is the
-- live space it belongs to, in the trash too; whether it is live or in the
-- trash follows from its ancestry: the root its parents lead to, the
-- space's own (its id is the space's) or the trash's (trashSpaceID). So
-- moving a subtree into the trash or back rewrites its top node only.
-- node_root is that root, NULL for a node that is gone or whose parents
-- lead to no root (a cycle, which check reports); UNION ends the walk
-- there.
CREATE OR REPLACE FUNCTION node_root(node text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
	root text;
BEGIN
	WITH RECURSIVE up (id, parent_id) AS (
		SELECT n.id, n.parent_id FROM nodes n WHERE n.id = node
		UNION
		SELECT n.id, n.parent_id FROM nodes n JOIN up ON n.id = up.parent_id
	)
	SELECT up.id INTO root FROM up WHERE up.parent_id IS NULL;
	RETURN root;
END $$;
-- The folders below a folder, found without reading its files: a search
-- walks them down to tell the trash's nodes from the live ones.
-- (kind 2 is storage.KindFolder.)
CREATE INDEX IF NOT EXISTS nodes_folders ON nodes (parent_id) WHERE kind = 2;

-- A chunked upload's claim (chunks.go) is held by the node that assembles
-- it: claim_token names the claim, and the node renews claim_until (the
-- database's clock) while it lives. A claim past claim_until is a node's
-- that died mid-assembly, and a retried assembly takes the upload over. A
-- claim without claim_until (from a node of an older version) never
-- lapses.
ALTER TABLE chunked_uploads ADD COLUMN IF NOT EXISTS claim_token text NOT NULL DEFAULT '';
ALTER TABLE chunked_uploads ADD COLUMN IF NOT EXISTS claim_until timestamptz;
