-- 024 (issue 22): the websocket, grpc, smtp, postgres, mysql, redis, docker and domain monitor types
-- (docs/monitors.md "Types and attributes"). Each column belongs to the types docs/monitors.md names
-- and stays NULL (or its default) on the others; db_password is sealed like the api_auth_* secrets.
ALTER TABLE monitors ADD COLUMN ws_send text;
ALTER TABLE monitors ADD COLUMN ws_expect text;
ALTER TABLE monitors ADD COLUMN grpc_service text;
ALTER TABLE monitors ADD COLUMN grpc_tls smallint NOT NULL DEFAULT 0;
ALTER TABLE monitors ADD COLUMN smtp_security text;
ALTER TABLE monitors ADD COLUMN db_password_enc text;
ALTER TABLE monitors ADD COLUMN db_query text;
ALTER TABLE monitors ADD COLUMN db_tls smallint NOT NULL DEFAULT 0;
ALTER TABLE monitors ADD COLUMN redis_username text;
ALTER TABLE monitors ADD COLUMN docker_host text;
ALTER TABLE monitors ADD COLUMN domain_expiry_warn_days bigint;
ALTER TABLE monitors ADD COLUMN domain_expires_at bigint;
