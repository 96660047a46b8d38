-- Objects a role that may create in the extension's schema puts there for
-- the 1.0 to 1.1 update (run by test/upgrade/run.sh as that role, with the
-- extension's schema first on search_path): an operator = and an unnest
-- that fit the arguments of the update script's statements better than
-- pg_catalog's, each recording whom it ran as.  They answer as pg_catalog's
-- would, so that only the record tells they ran.
CREATE TABLE planter.fired (what text, who text);
GRANT INSERT ON planter.fired TO PUBLIC;

CREATE FUNCTION planter.planted_eq(regproc, regprocedure) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO planter.fired VALUES ('operator =', current_user);
	RETURN $1::oid OPERATOR(pg_catalog.=) $2::oid;
END
$$;
CREATE OPERATOR planter.= (LEFTARG = regproc, RIGHTARG = regprocedure,
						   FUNCTION = planter.planted_eq);

CREATE FUNCTION planter.unnest(regprocedure[]) RETURNS SETOF regprocedure
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO planter.fired VALUES ('unnest', current_user);
	RETURN QUERY SELECT pg_catalog.unnest($1);
END
$$;
